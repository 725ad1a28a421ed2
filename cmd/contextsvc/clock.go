package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// noClock is what the /v1 API lacks for the clock commands.
const noClock = "a deployment runs on the real clock"

func newClockCmd(s *streams) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "clock",
		Short: "Read and advance the mock's fake clock (retries fall due without waiting)",
		Long: `Read the mock's clock, and advance it when it is fake (contextsvc mock
--fake-clock): every delivery attempt that falls due on the way runs, so a
retry the service makes in an hour is made now.

On the mock, through its admin API. On a deployment it says so and exits 3.`,
	})
	cmd.AddCommand(newClockShowCmd(s), newClockAdvanceCmd(s))
	return cmd
}

type clockOptions struct {
	s         *streams
	api       *apiFlags
	by        time.Duration
	toNextDue bool
	json      *jsonOutput
}

func newClockShowCmd(s *streams) *cobra.Command {
	o := &clockOptions{s: s}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the mock's time, and when the next delivery attempt is due",
		Args:  cobra.NoArgs,
	}
	o.api = addMockFlags(cmd, s, false)
	o.json = addJSONFlags(cmd, s, `the admin API's JSON as it came: {"now","fake","nextDueAt"}`)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error { return clockShowRun(cmd.Context(), o) })
	return cmd
}

func clockShowRun(ctx context.Context, o *clockOptions) error {
	m, err := o.api.mockOnly(ctx, "clock show", noClock)
	if err != nil {
		return err
	}
	c, raw, err := m.clock(ctx)
	if err != nil {
		return err
	}
	if o.json.enabled() {
		return o.json.write(ctx, o.s.out, raw)
	}
	kind := "real: it moves on its own"
	if c.Fake {
		kind = "fake: it moves only when advanced"
	}
	_, err = fmt.Fprintf(o.s.out, "The mock's clock: %s (%s); %s\n", when(c.Now), kind, nextDue(c))
	return err
}

// nextDue says when the next delivery attempt is due.
func nextDue(c *mockClock) string {
	if c.NextDueAt.IsZero() {
		return "no delivery attempt is waiting"
	}
	return "the next delivery attempt is due at " + when(c.NextDueAt)
}

func newClockAdvanceCmd(s *streams) *cobra.Command {
	o := &clockOptions{s: s}
	cmd := &cobra.Command{
		Use:   "advance DURATION | --to-next-due",
		Short: "Move the mock's fake clock forward, running every delivery attempt that falls due",
		Example: `  contextsvc clock advance 1h
  contextsvc clock advance 90s
  contextsvc clock advance --to-next-due`,
		Args: cobra.MaximumNArgs(1),
	}
	o.api = addMockFlags(cmd, s, false)
	cmd.Flags().BoolVar(&o.toNextDue, "to-next-due", false, "advance to the next waiting delivery attempt, whenever it is")
	o.json = addJSONFlags(cmd, s, `the admin API's JSON as it came: {"now","fake","nextDueAt","attempts"}`)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		switch {
		case o.toNextDue && len(args) > 0:
			return usagef("give a DURATION or --to-next-due, not both")
		case !o.toNextDue && len(args) == 0:
			return usagef("give how far to advance (a DURATION such as 90s, 1h30m or 24h), or --to-next-due")
		case len(args) > 0:
			d, err := parseAdvance(args[0])
			if err != nil {
				return err
			}
			o.by = d
		}
		return clockAdvanceRun(cmd.Context(), o)
	})
	return cmd
}

// parseAdvance reads how far to advance the clock.
func parseAdvance(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil && strings.HasSuffix(v, "d"):
		return 0, usagef("%q is not a duration: a day is 24h (units h, m, s, ms)", v)
	case err != nil:
		return 0, usagef("%q is not a duration such as 90s, 1h30m or 24h", v)
	case d < 0:
		return 0, usagef("the clock only moves forward: %s is negative", d)
	}
	return d, nil
}

func clockAdvanceRun(ctx context.Context, o *clockOptions) error {
	m, err := o.api.mockOnly(ctx, "clock advance", noClock)
	if err != nil {
		return err
	}
	before, _, err := m.clock(ctx)
	if err != nil {
		return err
	}
	c, raw, err := m.advanceClock(ctx, o.by, o.toNextDue)
	if err != nil {
		return err
	}
	if o.json.enabled() {
		return o.json.write(ctx, o.s.out, raw)
	}
	ran := "no delivery attempt fell due"
	switch c.Attempts {
	case 0:
	case 1:
		ran = "1 delivery attempt ran"
	default:
		ran = fmt.Sprintf("%d delivery attempts ran", c.Attempts)
	}
	_, err = fmt.Fprintf(o.s.out, "Advanced the mock's clock by %s to %s: %s; %s\n", c.Now.Sub(before.Now), when(c.Now), ran, nextDue(c))
	return err
}
