package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// noEventLog is what the /v1 API lacks for the event and delivery
// commands.
const noEventLog = "the service's /v1 API has no event log, deliveries or resend"

func newEventsCmd(s *streams) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:     "events",
		Aliases: []string{"event"},
		Short:   "List the mock's events and send one again (replay)",
		Long: `List the events the mock kept, and send one again to your webhooks: a new
signed delivery of the event as it was first sent, with the same id, which a
receiver that deduplicates handles once (contextsvc listen marks it).

These work on the mock, through its admin API: the service's /v1 API has no
event log. On a deployment they say so and exit 3.`,
	})
	cmd.AddCommand(newEventsListCmd(s), newEventsResendCmd(s))
	return cmd
}

// listFlags are the paging flags of a list of the mock's.
type listFlags struct {
	limit  int
	cursor string
	all    bool
	// limitGiven is set when --limit was given: without it, --all reads
	// pages of 100, the most a page holds.
	limitGiven bool
}

func (l *listFlags) add(cmd *cobra.Command, noun string) {
	fs := cmd.Flags()
	fs.IntVar(&l.limit, "limit", 20, noun+" per page, 1 to 100")
	fs.StringVar(&l.cursor, "cursor", "", "start after a previous page: its nextCursor (default none: the first page)")
	fs.BoolVar(&l.all, "all", false, "every page, not just one (pages of 100 unless --limit is given; with --json, each page object in turn)")
}

// check checks the flags of cmd.
func (l *listFlags) check(cmd *cobra.Command) error {
	l.limitGiven = cmd.Flags().Changed("limit")
	if l.limit < 1 || l.limit > 100 {
		return usagef("--limit must be 1 to 100, got %d", l.limit)
	}
	return nil
}

// query is the list's query: newest first, its page size and cursor.
func (l *listFlags) query() url.Values {
	limit := l.limit
	if l.all && !l.limitGiven {
		limit = 100
	}
	q := url.Values{"limit": {strconv.Itoa(limit)}, "order": {"desc"}}
	if l.cursor != "" {
		q.Set("cursor", l.cursor)
	}
	return q
}

// listAdmin reads a list of the mock's (path, its filters in q) for a
// command: a page, or every page with --all; with --json each page as it
// came, else each item made a row of t by row, each page's rows written
// before the next page is asked for. It returns the line that says more
// pages follow, for after the table, and how many rows there were.
func listAdmin[T any](ctx context.Context, s *streams, m *mockAdmin, path string, q url.Values, l *listFlags, j *jsonOutput, noun string,
	t *table, row func(T) []string) (more string, rows int, err error) {
	err = everyPage(ctx, m, path, q, func(p *adminPage[T], raw []byte) error {
		if j.enabled() {
			if err := j.write(ctx, s.out, raw); err != nil {
				return err
			}
		} else {
			for _, it := range p.Data {
				t.add(row(it)...)
			}
			rows += len(p.Data)
			if err := t.flush(); err != nil {
				return err
			}
		}
		if !l.all {
			if p.HasMore {
				more = moreFollow(noun, p.NextCursor)
			}
			return errStopPages
		}
		return nil
	})
	if errors.Is(err, errStopPages) {
		err = nil
	}
	return more, rows, err
}

// errStopPages ends everyPage after the page at hand.
var errStopPages = errors.New("stop")

type eventsListOptions struct {
	s         *streams
	api       *apiFlags
	eventType string
	list      listFlags
	json      *jsonOutput
}

func newEventsListCmd(s *streams) *cobra.Command {
	o := &eventsListOptions{s: s}
	cmd := &cobra.Command{
		Use:     "list [--type T] [--limit N] [--all]",
		Aliases: []string{"ls"},
		Short:   "List the mock's events of your key's account, newest first",
		Example: `  contextsvc events list
  contextsvc events list --type context.updated --jq '.data[].id'`,
		Args: cobra.NoArgs,
	}
	o.api = addMockFlags(cmd, s, true)
	cmd.Flags().StringVar(&o.eventType, "type", "", "keep only the events of this `type` (default every type)")
	o.list.add(cmd, "events")
	o.json = addJSONFlags(cmd, s, "the admin API's JSON as it came: the page object (with --all, each page object in turn)")
	_ = cmd.RegisterFlagCompletionFunc("type", completeEventTypes)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		if err := o.list.check(cmd); err != nil {
			return err
		}
		return eventsListRun(cmd.Context(), o)
	})
	return cmd
}

func eventsListRun(ctx context.Context, o *eventsListOptions) error {
	if o.eventType != "" && !contextsvc.EventType(o.eventType).Known() {
		return usagef("--type %q is not an event type%s; the types are %s", o.eventType, nearestType(o.eventType), typeNames())
	}
	m, account, err := o.api.keyMockAccount(ctx, "events list", noEventLog)
	if err != nil {
		return err
	}
	q := o.list.query()
	q.Set("account", account)
	if o.eventType != "" {
		q.Set("type", o.eventType)
	}
	t := newTable(o.s, "ID", "TYPE", "TIME", "ABOUT")
	more, rows, err := listAdmin(ctx, o.s, m, "/events", q, &o.list, o.json, "events", t, func(ev mockserver.Event) []string {
		return []string{t.cell(ev.ID, 80), t.cell(string(ev.Type), 40), when(ev.Timestamp), t.cell(eventSubject(ev.Data), 80)}
	})
	if err != nil || o.json.enabled() {
		return err
	}
	defer noteMore(o.s, more)
	if rows == 0 {
		_, err := fmt.Fprintf(o.s.out, "No events in the mock's account %s.\n", cell(account, 80))
		return err
	}
	return t.finish()
}

// eventSubject is what an event is about, from its data: the context,
// or the team member.
func eventSubject(data json.RawMessage) string {
	var d struct {
		ContextID string `json:"contextId"`
		TeamID    string `json:"teamId"`
		UserID    string `json:"userId"`
	}
	_ = json.Unmarshal(data, &d)
	switch {
	case d.ContextID != "":
		return d.ContextID
	case d.TeamID != "" || d.UserID != "":
		return cmp.Or(d.UserID, "-") + " in " + cmp.Or(d.TeamID, "-")
	}
	return "-"
}

type eventsResendOptions struct {
	s       *streams
	api     *apiFlags
	eventID string
	webhook string
	json    *jsonOutput
}

func newEventsResendCmd(s *streams) *cobra.Command {
	o := &eventsResendOptions{s: s}
	cmd := &cobra.Command{
		Use:   "resend EVENT_ID [--webhook ID]",
		Short: "Send a past event again: a new signed delivery to your webhooks, or to one",
		Long: `Send a past event again, as a new delivery signed with each webhook's
secret: to the webhook --webhook names, or to every active webhook of the
account that receives the event's type (a webhook registered since the
event too, such as a new contextsvc listen's). The event keeps its id,
timestamp and data.

On the mock, through its admin API; the service's /v1 API has no resend.`,
		Example: `  contextsvc events resend evt_01h2xcejqtf2nbrexx3vqjhp41
  contextsvc events resend evt_01h2xcejqtf2nbrexx3vqjhp41 --webhook wh_123`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] == "" {
				return usagef("events resend takes one argument, the event's id (evt_…; contextsvc events list shows them)")
			}
			return nil
		},
	}
	o.api = addMockFlags(cmd, s, true)
	cmd.Flags().StringVar(&o.webhook, "webhook", "", "send it to this webhook `ID` alone (default every webhook that receives the event)")
	o.json = addJSONFlags(cmd, s, `the admin API's JSON as it came: {"deliveries":[…]}, the new deliveries`)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		o.eventID = args[0]
		return eventsResendRun(cmd.Context(), o)
	})
	return cmd
}

func eventsResendRun(ctx context.Context, o *eventsResendOptions) error {
	m, account, err := o.api.keyMockAccount(ctx, "events resend", noEventLog)
	if err != nil {
		return err
	}
	// Another account's event is none of the key's: it is not found, as
	// another account's context is.
	ev, err := m.event(ctx, o.eventID)
	if err == nil && ev.Account != account {
		err = fmt.Errorf("the mock keeps no event %s in the key's account %s", o.eventID, account)
	}
	if err != nil {
		return err
	}
	res, raw, err := m.resend(ctx, o.eventID, o.webhook)
	if err != nil {
		return err
	}
	if o.json.enabled() {
		return o.json.write(ctx, o.s.out, raw)
	}
	for _, d := range res.Deliveries {
		if _, err := fmt.Fprintf(o.s.out, "Resent %s (%s) to %s: delivery %s\n", cell(ev.ID, 80), cell(string(ev.Type), 40), cell(d.WebhookID, 80), cell(d.ID, 80)); err != nil {
			return err
		}
	}
	return nil
}
