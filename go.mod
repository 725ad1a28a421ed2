module github.com/contextsvc/contextsvc-go

go 1.26.0

require (
	github.com/go-json-experiment/json v1.27.2
	github.com/google/go-cmp v0.7.0
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/jarcoal/httpmock v1.4.2
	golang.org/x/time v0.16.0
)

require github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
