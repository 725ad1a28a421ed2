package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newResetCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Empty the mock: every account's contexts, webhooks, events, deliveries and faults (no confirmation is asked)",
		Long: `Empty the mock: every account's contexts, webhooks, events, deliveries,
faults and idempotency keys go, and every rate-limit bucket is full again.
Its keys and its clock stay; with --state-file, the file is emptied at its
next write. Nothing asks for confirmation.

On the mock, through its admin API. On a deployment it says so and exits 3.`,
		Args: cobra.NoArgs,
	}
	api := addMockFlags(cmd, s, false)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		m, err := api.mockOnly(cmd.Context(), "reset", "a deployment's data is not reset from here")
		if err != nil {
			return err
		}
		if err := m.reset(cmd.Context()); err != nil {
			return err
		}
		_, err = fmt.Fprintln(s.out, "Reset the mock: no contexts, webhooks, events, deliveries or faults are left (its keys and clock stay).")
		return err
	})
	return cmd
}
