// Package planflag reads the plan a command's flag names: free, pro,
// business or enterprise=PERMINUTE/BURST, the one spelling the commands
// (contextsvc --plan, contextsvc-conform -plan) share.
package planflag

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Parse returns the SDK's plan that v names. The error says which forms
// there are.
func Parse(v string) (contextsvc.Plan, error) {
	switch {
	case v == "free":
		return contextsvc.FreePlan(), nil
	case v == "pro":
		return contextsvc.ProPlan(), nil
	case v == "business":
		return contextsvc.BusinessPlan(), nil
	case strings.HasPrefix(v, "enterprise="):
		n, b, ok := strings.Cut(strings.TrimPrefix(v, "enterprise="), "/")
		perMinute, err1 := strconv.Atoi(n)
		burst, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || perMinute <= 0 || burst <= 0 {
			return contextsvc.Plan{}, fmt.Errorf("enterprise=PERMINUTE/BURST takes two positive numbers, got %q", v)
		}
		return contextsvc.EnterprisePlan(perMinute, burst)
	}
	return contextsvc.Plan{}, errors.New("must be free, pro, business or enterprise=PERMINUTE/BURST")
}
