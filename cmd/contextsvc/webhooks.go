package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/internal/redact"
)

func newWebhooksCmd(s *streams) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:     "webhooks",
		Aliases: []string{"webhook"},
		Short:   "Register webhooks (the API has no way to list, change or delete one)",
	})
	cmd.AddCommand(newWebhooksRegisterCmd(s))
	return cmd
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
