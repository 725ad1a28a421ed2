package conformcmd

import (
	"errors"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance"
)

// planFlag is the -plan flag: the key's plan, which paces the run with the
// SDK's limiter. It is the one place the command names the SDK's plans.
type planFlag struct{ name string }

// String and Set make planFlag a flag.Value; Set checks the form.
func (p *planFlag) String() string { return p.name }

func (p *planFlag) Set(v string) error {
	if v == "unlimited" {
		p.name = v
		return nil
	}
	if _, err := contextsvc.ParsePlan(v); err != nil {
		if strings.HasPrefix(v, "enterprise=") {
			return errors.New(strings.TrimPrefix(err.Error(), contextsvc.ErrInvalidArgument.Error()+": "))
		}
		return errors.New("must be free, pro, business, enterprise=PERMINUTE/BURST or unlimited")
	}
	p.name = v
	return nil
}

// apply sets the run's pacing: the SDK's limiter for the plan and the
// rate X-RateLimit-Limit must state, or none for an unlimited key.
func (p planFlag) apply(cfg *conformance.Config) error {
	if p.name == "unlimited" {
		cfg.Unlimited = true
		return nil
	}
	plan, err := contextsvc.ParsePlan(p.name)
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
