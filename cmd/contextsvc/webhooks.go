package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/redact"
)

func newWebhooksCmd(s *streams) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:     "webhooks",
		Aliases: []string{"webhook"},
		Short:   "Register webhooks; on the mock, list and delete them too",
		Long: `Register webhooks through the service's /v1 API. The API has no way to list
or delete one: on the mock, list and delete work through its admin API; on
a deployment they say so and exit 3.`,
	})
	cmd.AddCommand(newWebhooksRegisterCmd(s), newWebhooksListCmd(s), newWebhooksDeleteCmd(s))
	return cmd
}

// noWebhookAdmin is what the /v1 API lacks for listing and deleting
// webhooks.
const noWebhookAdmin = "the service's /v1 API has no way to list or delete webhooks"

type webhooksListOptions struct {
	s    *streams
	api  *apiFlags
	json *jsonOutput
}

func newWebhooksListCmd(s *streams) *cobra.Command {
	o := &webhooksListOptions{s: s}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the webhooks of your key's account on the mock (never their secrets)",
		Args:    cobra.NoArgs,
	}
	o.api = addMockFlags(cmd, s, true)
	o.json = addJSONFlags(cmd, s, "the admin API's JSON as it came: each page object in turn (an account holds at most 100 webhooks)")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error { return webhooksListRun(cmd.Context(), o) })
	return cmd
}

func webhooksListRun(ctx context.Context, o *webhooksListOptions) error {
	m, account, err := o.api.keyMockAccount(ctx, "webhooks list", noWebhookAdmin)
	if err != nil {
		return err
	}
	t := newTable(o.s, "ID", "URL", "EVENTS", "ACTIVE", "CREATED")
	every := &listFlags{all: true}
	_, rows, err := listAdmin(ctx, o.s, m, "/webhooks", url.Values{"limit": {"100"}, "account": {account}}, every, o.json, "webhooks", t, func(wh mockserver.Webhook) []string {
		names := make([]string, len(wh.Events))
		for i, e := range wh.Events {
			names[i] = string(e)
		}
		active := "yes"
		if !wh.Active {
			active = "no"
		}
		return []string{t.cell(wh.ID, 80), t.cell(redact.URL(wh.URL), 80), t.cell(strings.Join(names, ","), 120), active, when(wh.CreatedAt)}
	})
	if err != nil || o.json.enabled() {
		return err
	}
	if rows == 0 {
		_, err := fmt.Fprintf(o.s.out, "No webhooks in the mock's account %s.\n", cell(account, 80))
		return err
	}
	return t.finish()
}

type webhooksDeleteOptions struct {
	s   *streams
	api *apiFlags
	id  string
}

func newWebhooksDeleteCmd(s *streams) *cobra.Command {
	o := &webhooksDeleteOptions{s: s}
	cmd := &cobra.Command{
		Use:     "delete ID",
		Aliases: []string{"rm"},
		Short:   "Delete a webhook of your key's account on the mock (no confirmation is asked)",
		Long: `Delete a webhook of your key's account on the mock: it takes no more
deliveries, and those waiting for a retry end failed. Nothing asks for
confirmation.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || args[0] == "" {
				return usagef("webhooks delete takes one argument, the webhook's id (wh_…; contextsvc webhooks list shows them)")
			}
			return nil
		},
	}
	o.api = addMockFlags(cmd, s, true)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		o.id = args[0]
		return webhooksDeleteRun(cmd.Context(), o)
	})
	return cmd
}

func webhooksDeleteRun(ctx context.Context, o *webhooksDeleteOptions) error {
	m, account, err := o.api.keyMockAccount(ctx, "webhooks delete", noWebhookAdmin)
	if err != nil {
		return err
	}
	// Another account's webhook is none of the key's: not found, as
	// another account's context is.
	wh, err := m.webhook(ctx, o.id)
	if err == nil && wh.Account != account {
		err = fmt.Errorf("the mock has no webhook %s in the key's account %s", o.id, account)
	}
	if err != nil {
		return err
	}
	if err := m.deleteWebhook(ctx, o.id); err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.s.out, "Deleted the webhook %s (%s)\n", cell(wh.ID, 80), cell(redact.URL(wh.URL), 200))
	return err
}

// eventTypes reads --event values: each one of the eight types; none is
// every type when all is set.
func eventTypes(values []string, all bool) ([]contextsvc.EventType, error) {
	if len(values) == 0 {
		if all {
			return contextsvc.AllEventTypes(), nil
		}
		return nil, usagef("give at least one --event: %s", typeNames())
	}
	out := make([]contextsvc.EventType, 0, len(values))
	for _, v := range values {
		t := contextsvc.EventType(v)
		if !t.Known() {
			return nil, usagef("--event %q is not an event type%s; the types are %s", v, nearestType(v), typeNames())
		}
		out = append(out, t)
	}
	return out, nil
}

// typeNames lists the event types.
func typeNames() string {
	var names []string
	for _, t := range contextsvc.AllEventTypes() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

// nearestType suggests the event type v was probably meant to be, as
// cobra suggests a command: the nearest by edit distance, or one it is a
// prefix of.
func nearestType(v string) string {
	v = strings.ToLower(v)
	best, bestD := "", 4
	for _, t := range contextsvc.AllEventTypes() {
		if d := editDistance(v, string(t)); d < bestD {
			best, bestD = string(t), d
		}
	}
	for _, t := range contextsvc.AllEventTypes() {
		if best == "" && v != "" && strings.HasPrefix(string(t), v) {
			best = string(t)
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// completeEventTypes completes --event and trigger's argument.
func completeEventTypes(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, t := range contextsvc.AllEventTypes() {
		if strings.HasPrefix(string(t), toComplete) {
			out = append(out, string(t))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// signingSecret settles a command's --secret: the one given, refused
// where the service would refuse it, or else a new one (generated true):
// whsec_ and 32 random characters.
func signingSecret(cmd *cobra.Command, secret *string) (generated bool, err error) {
	if cmd.Flags().Changed("secret") {
		return false, checkSecret(*secret)
	}
	var b [20]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	*secret = "whsec_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
	return true, nil
}

// checkSecret refuses a --secret the service would refuse.
func checkSecret(secret string) error {
	if n := len([]rune(secret)); n < 1 || n > 256 {
		return usagef("--secret must be 1 to 256 characters, got %d", n)
	}
	if strings.ContainsFunc(secret, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }) {
		return usagef("--secret must not hold control characters")
	}
	return nil
}

func newWebhooksRegisterCmd(s *streams) *cobra.Command {
	var (
		hookURL string
		events  []string
		secret  string
	)
	cmd := &cobra.Command{
		Use:   "register --url U --event T... [--secret S]",
		Short: "Register a webhook, signed with a secret of yours or a new one (printed once)",
		Example: `  contextsvc webhooks register --url https://example.com/hooks --event context.updated --event context.deleted
  contextsvc webhooks register --url http://127.0.0.1:3000/hooks --event context.created --secret "$WEBHOOK_SECRET"`,
		Args: cobra.NoArgs,
	}
	api := addAPIFlags(cmd, s)
	fs := cmd.Flags()
	fs.StringVar(&hookURL, "url", "", "the https `URL` that receives the deliveries; http only for a loopback host (required)")
	fs.StringArrayVar(&events, "event", nil, "an event `type` to deliver, repeatable (required): "+typeNames())
	fs.StringVar(&secret, "secret", "", "the signing `secret`, 1 to 256 characters (default: a new random whsec_… secret, printed once)")
	asJSON := addJSONFlags(cmd, s, "the API's JSON of the webhook as it came, with the secret when it was made up")
	_ = cmd.MarkFlagRequired("url")
	_ = cmd.MarkFlagRequired("event")
	_ = cmd.RegisterFlagCompletionFunc("event", completeEventTypes)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		types, err := eventTypes(events, false)
		if err != nil {
			return err
		}
		generated, err := signingSecret(cmd, &secret)
		if err != nil {
			return err
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		var raw rawBody
		wh, err := c.Webhooks.Register(cmd.Context(), &contextsvc.RegisterWebhookRequest{URL: hookURL, Events: types, Secret: secret}, raw.option())
		if err != nil {
			return err
		}
		if asJSON.enabled() {
			body := raw.bytes()
			if generated {
				// The API never returns the secret: without it in the
				// JSON, a script would lose it.
				if body, err = withField(body, "secret", secret); err != nil {
					return err
				}
			}
			return asJSON.write(cmd.Context(), s.out, body)
		}
		var names []string
		for _, t := range wh.Events {
			names = append(names, string(t))
		}
		fmt.Fprintf(s.out, "Registered %s: %s to %s\n", cell(wh.ID, 80), cell(strings.Join(names, ", "), 300), cell(redact.URL(wh.URL), 300))
		if generated {
			fmt.Fprintf(s.out, "Signing secret: %s (shown once: the API never returns it)\n", secret)
		}
		return nil
	})
	return cmd
}

// withField adds a field to a JSON object as it came (its other fields,
// their order and spelling kept), last.
func withField(object []byte, name string, value any) ([]byte, error) {
	trimmed := bytes.TrimSpace(object)
	if len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		return nil, fmt.Errorf("the answer is not a JSON object")
	}
	field, err := json.Marshal(map[string]any{name: value})
	if err != nil {
		return nil, err
	}
	out := bytes.TrimSpace(trimmed[:len(trimmed)-1])
	if len(out) > 1 {
		out = append(out, ',')
	}
	return append(append(bytes.Clone(out), field[1:]...), '\n'), nil
}
