package conformcmd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/internal/conformance"
)

// planFlag is the -plan flag: the key's plan, which paces the run with the
// SDK's limiter. It is the one place the command names the SDK's plans.
type planFlag struct{ name string }

// String and Set make planFlag a flag.Value; Set checks the form.
func (p *planFlag) String() string { return p.name }

func (p *planFlag) Set(v string) error {
	if _, err := parsePlan(v); err != nil && v != "unlimited" {
		return err
	}
	p.name = v
	return nil
}

// parsePlan returns the SDK's plan of a -plan value.
func parsePlan(v string) (contextsvc.Plan, error) {
	switch {
	case v == "free":
		return contextsvc.FreePlan(), nil
	case v == "pro":
		return contextsvc.ProPlan(), nil
	case v == "business":
		return contextsvc.BusinessPlan(), nil
	case strings.HasPrefix(v, "enterprise="):
		n, b, ok := strings.Cut(strings.TrimPrefix(v, "enterprise="), "/")
		pm, err1 := strconv.Atoi(n)
		burst, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || pm <= 0 || burst <= 0 {
			return contextsvc.Plan{}, fmt.Errorf("enterprise plan must be enterprise=PERMINUTE/BURST with positive numbers, got %q", v)
		}
		return contextsvc.EnterprisePlan(pm, burst)
	}
	return contextsvc.Plan{}, errors.New("must be free, pro, business, enterprise=PERMINUTE/BURST or unlimited")
}

// apply sets the run's pacing: the SDK's limiter for the plan and the
// rate X-RateLimit-Limit must state, or none for an unlimited key.
func (p planFlag) apply(cfg *conformance.Config) error {
	if p.name == "unlimited" {
		cfg.Unlimited = true
		return nil
	}
	plan, err := parsePlan(p.name)
	if err != nil {
		return err
	}
	lim, err := contextsvc.NewLocalLimiter(plan)
	if err != nil {
		return err
	}
	cfg.Limiter, cfg.PerMinute = lim, plan.PerMinute()
	return nil
}
