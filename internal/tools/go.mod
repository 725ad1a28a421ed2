module github.com/contextsvc/contextsvc-go/internal/tools

go 1.26.0

require golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4

require (
	github.com/google/go-cmp v0.7.0 // indirect
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a // indirect
)
