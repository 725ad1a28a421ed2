package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/redact"
)

func newDeliveriesCmd(s *streams) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:     "deliveries",
		Aliases: []string{"delivery"},
		Short:   "List the mock's webhook deliveries, with their attempts",
		Long: `List the webhook deliveries the mock made, each with its state, attempts
and when the next is due.

On the mock, through its admin API: the service's /v1 API has no list of
deliveries. On a deployment it says so and exits 3.`,
	})
	cmd.AddCommand(newDeliveriesListCmd(s))
	return cmd
}

type deliveriesListOptions struct {
	s       *streams
	api     *apiFlags
	event   string
	webhook string
	status  string
	list    listFlags
	json    *jsonOutput
}

func newDeliveriesListCmd(s *streams) *cobra.Command {
	o := &deliveriesListOptions{s: s}
	cmd := &cobra.Command{
		Use:     "list [--event ID] [--webhook ID] [--status failed|pending|succeeded]",
		Aliases: []string{"ls"},
		Short:   "List the deliveries of your key's account, newest first",
		Example: `  contextsvc deliveries list --status failed
  contextsvc deliveries list --event evt_01h2xcejqtf2nbrexx3vqjhp41 --json`,
		Args: cobra.NoArgs,
	}
	o.api = addMockFlags(cmd, s, true)
	fs := cmd.Flags()
	fs.StringVar(&o.event, "event", "", "keep only the deliveries of this event `ID` (default every event)")
	fs.StringVar(&o.webhook, "webhook", "", "keep only the deliveries to this webhook `ID` (default every webhook)")
	fs.StringVar(&o.status, "status", "", "keep only the deliveries in this `state`: pending (an attempt due or waiting for a retry), succeeded or failed (default every state)")
	o.list.add(cmd, "deliveries")
	o.json = addJSONFlags(cmd, s, "the admin API's JSON as it came: the page object (with --all, each page object in turn)")
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions([]string{"pending", "succeeded", "failed"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		if err := o.list.check(cmd); err != nil {
			return err
		}
		return deliveriesListRun(cmd.Context(), o)
	})
	return cmd
}

func deliveriesListRun(ctx context.Context, o *deliveriesListOptions) error {
	switch mockserver.DeliveryState(o.status) {
	case "", mockserver.DeliveryPending, mockserver.DeliverySucceeded, mockserver.DeliveryFailed:
	default:
		return usagef("--status must be pending, succeeded or failed, got %q", o.status)
	}
	m, account, err := o.api.keyMockAccount(ctx, "deliveries list", noEventLog)
	if err != nil {
		return err
	}
	q := o.list.query()
	q.Set("account", account)
	for name, v := range map[string]string{"eventId": o.event, "webhookId": o.webhook, "state": o.status} {
		if v != "" {
			q.Set(name, v)
		}
	}
	t := newTable(o.s, "ID", "EVENT", "TYPE", "WEBHOOK", "STATE", "ATTEMPTS", "LAST ANSWER", "NEXT ATTEMPT", "URL")
	more, rows, err := listAdmin(ctx, o.s, m, "/deliveries", q, &o.list, o.json, "deliveries", t, func(d mockserver.Delivery) []string {
		return []string{t.cell(d.ID, 80), t.cell(d.EventID, 80), t.cell(string(d.EventType), 40), t.cell(d.WebhookID, 80), t.cell(string(d.State), 20),
			strconv.Itoa(len(d.Attempts)), t.cell(lastAnswer(d), 60), when(d.NextAttemptAt), t.cell(redact.URL(d.URL), 80)}
	})
	if err != nil || o.json.enabled() {
		return err
	}
	defer noteMore(o.s, more)
	if rows == 0 {
		_, err := fmt.Fprintf(o.s.out, "No deliveries in the mock's account %s.\n", cell(account, 80))
		return err
	}
	return t.finish()
}

// lastAnswer is what the receiver answered the delivery's latest
// attempt: its status, or why there was none.
func lastAnswer(d mockserver.Delivery) string {
	if len(d.Attempts) == 0 {
		if d.FailureReason != "" {
			return d.FailureReason
		}
		return "-"
	}
	a := d.Attempts[len(d.Attempts)-1]
	switch {
	case a.StatusCode != 0:
		return fmt.Sprintf("%d %s", a.StatusCode, http.StatusText(a.StatusCode))
	case a.Error != "":
		return a.Error
	}
	return "-"
}
