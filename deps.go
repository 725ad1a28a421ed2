//go:build tools

package contextsvc

import (
	_ "github.com/getkin/kin-openapi/openapi3filter"
	_ "github.com/getkin/kin-openapi/routers/legacy"
	_ "github.com/go-pdf/fpdf"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/hashicorp/go-retryablehttp"
	_ "github.com/jarcoal/httpmock"
	_ "github.com/yuin/goldmark"
	_ "golang.org/x/time/rate"
)
