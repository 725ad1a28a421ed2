package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/contextsvc/contextsvc-go/mockserver"
)

// noChaos is what the /v1 API lacks for the chaos commands.
const noChaos = "a deployment has no chaos mode"

func newChaosCmd(s *streams) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "chaos",
		Short: "Show, set or stop the mock's chaos mode (duplicates, reordering, API errors)",
		Long: `The mock's chaos mode plays the service's failures, reproducibly: deliveries
sent twice or out of order, /v1 requests that fail with 429 or 5xx. SPEC is
what contextsvc mock --chaos takes: comma-separated KEY=VALUE among seed=N,
duplicate=P, reorder=P, delay=D and api-error=P, P a probability from 0 to 1.

On the mock, through its admin API. On a deployment it says so and exits 3.`,
	})
	cmd.AddCommand(newChaosShowCmd(s), newChaosSetCmd(s), newChaosOffCmd(s))
	return cmd
}

type chaosOptions struct {
	s    *streams
	api  *apiFlags
	spec string
	json *jsonOutput
}

func newChaosShowCmd(s *streams) *cobra.Command {
	o := &chaosOptions{s: s}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show the chaos mode: its settings and what it did",
		Args:  cobra.NoArgs,
	}
	o.api = addMockFlags(cmd, s, false)
	o.json = addJSONFlags(cmd, s, "the admin API's JSON as it came, the newest decisions included")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		m, err := o.api.mockOnly(cmd.Context(), "chaos show", noChaos)
		if err != nil {
			return err
		}
		c, raw, err := m.chaos(cmd.Context())
		if err != nil {
			return err
		}
		return o.print(cmd.Context(), c, raw)
	})
	return cmd
}

// print shows the chaos mode as the mock answered it.
func (o *chaosOptions) print(ctx context.Context, c *mockChaos, raw []byte) error {
	if o.json.enabled() {
		return o.json.write(ctx, o.s.out, raw)
	}
	if !c.On {
		_, err := fmt.Fprintln(o.s.out, "Chaos: off.")
		return err
	}
	seed := fmt.Sprintf("seed %d", c.Seed)
	if c.SeedChosen {
		seed += " (chosen by the mock: give seed=" + fmt.Sprint(c.Seed) + " to replay)"
	}
	_, err := fmt.Fprintf(o.s.out, "Chaos: on since %s, %s, %s.\nSo far: %d requests (%d failed by chaos), %d events (%d deliveries held back, %d sent twice).\n",
		when(c.Since), cell(c.Spec, 200), seed, c.Requests, c.APIErrors, c.Events, c.Held, c.Duplicates)
	return err
}

func newChaosSetCmd(s *streams) *cobra.Command {
	o := &chaosOptions{s: s}
	cmd := &cobra.Command{
		Use:   "set SPEC",
		Short: "Set the chaos mode (it starts over: counts and decisions anew)",
		Example: `  contextsvc chaos set seed=42,duplicate=0.2,reorder=0.3
  contextsvc chaos set api-error=0.1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
				return usagef("chaos set takes one argument, the SPEC (such as seed=42,duplicate=0.2); chaos off stops it")
			}
			return nil
		},
	}
	o.api = addMockFlags(cmd, s, false)
	o.json = addJSONFlags(cmd, s, "the admin API's JSON as it came")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		o.spec = args[0]
		// Checked here as the mock will: a mistake is a usage error,
		// before anything is sent.
		if _, err := mockserver.ParseChaos(o.spec); err != nil {
			return usagef("%s", strings.TrimPrefix(err.Error(), "mockserver: "))
		}
		m, err := o.api.mockOnly(cmd.Context(), "chaos set", noChaos)
		if err != nil {
			return err
		}
		c, raw, err := m.setChaos(cmd.Context(), o.spec)
		if err != nil {
			return err
		}
		return o.print(cmd.Context(), c, raw)
	})
	return cmd
}

func newChaosOffCmd(s *streams) *cobra.Command {
	o := &chaosOptions{s: s}
	cmd := &cobra.Command{
		Use:   "off",
		Short: "Stop the chaos mode",
		Args:  cobra.NoArgs,
	}
	o.api = addMockFlags(cmd, s, false)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		m, err := o.api.mockOnly(cmd.Context(), "chaos off", noChaos)
		if err != nil {
			return err
		}
		if err := m.stopChaos(cmd.Context()); err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.s.out, "Chaos: off.")
		return err
	})
	return cmd
}
