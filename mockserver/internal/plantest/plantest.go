// Package plantest builds the plans tests need. Its one function fails
// the test on limits EnterprisePlan refuses, so a test's table can hold
// plans as values.
package plantest

import (
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Enterprise is contextsvc.EnterprisePlan for limits that must be accepted.
func Enterprise(tb testing.TB, perMinute, burst int) contextsvc.Plan {
	tb.Helper()
	p, err := contextsvc.EnterprisePlan(perMinute, burst)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
