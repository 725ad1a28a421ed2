package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// triggerPrefix starts the name of the context trigger creates on a
// deployment.
const triggerPrefix = "contextsvc-trigger-"

// cleanupTimeout bounds the requests that undo what a command did, made
// after an interrupt too.
const cleanupTimeout = 30 * time.Second

// triggerOptions are trigger's: the event type, and the data of your
// own (a fixture, overrides) or the context it is about.
type triggerOptions struct {
	s         *streams
	api       *apiFlags
	typ       contextsvc.EventType
	overrides []string
	fixture   string
	contextID string
}

func newTriggerCmd(s *streams) *cobra.Command {
	o := &triggerOptions{s: s}
	cmd := &cobra.Command{
		Use:   "trigger EVENT_TYPE [--override PATH=VALUE]... [--fixture FILE] [--context ID]",
		Short: "Make the service fire one event of a type, to see your webhooks at work",
		Long: `Make the service fire one event of the type named, delivered to the
account's webhooks (contextsvc listen shows each delivery).

On the mock, through its admin API, with realistic data: the account's
oldest context (its name, version, author and latest changes), --context's,
or a made-up one when the account has none; context.published is the mock's
publish action. Nothing of the account changes. Your own data goes on top:
--fixture FILE holds the event's data as JSON (its fields replace those
made up; a whole event, as a delivery carries it, works too), and each
--override PATH=VALUE sets one field (changes.word_count_delta=12,
tags.0=ops): text where the field holds text, else JSON. The result must
follow the contract's schema of the event's data (the mock's OpenAPI
document): a field it does not have, or a value of the wrong kind, is
refused with the field named, before anything is sent.

On a deployment, by the /v1 action that fires the event: it creates a
temporary context named contextsvc-trigger-…, updates or exports it for
context.updated and export.completed, and deletes it, so that context's
other events (context.created, context.version.created, context.deleted)
fire too; with --context, export.completed exports that context instead.
A deployment makes each event's data itself, and /v1 cannot cause
team.member.added, team.member.removed or context.published: for those,
and for --fixture and --override, it says so and exits 3.`,
		Example: `  contextsvc trigger context.updated
  contextsvc trigger context.updated --override name="Release notes" --override changes.word_count_delta=120
  contextsvc trigger export.completed --context ctx_123 --override format=pdf
  contextsvc trigger team.member.added --fixture member.json   # on the mock`,
		ValidArgsFunction: completeEventTypes,
	}
	o.api = addAPIFlags(cmd, s)
	fs := cmd.Flags()
	fs.StringArrayVar(&o.overrides, "override", nil, "set a field of the event's data, `PATH=VALUE`, repeatable (default none)")
	fs.StringVar(&o.fixture, "fixture", "", "a JSON `file` of the event's data, whose fields replace those made up, or - for stdin (default none)")
	fs.StringVar(&o.contextID, "context", "", "the context `ID` the event is about (default the account's oldest)")
	_ = cmd.RegisterFlagCompletionFunc("context", completeContextIDs(o.api))
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return usagef("trigger takes one argument, the event type: %s", typeNames())
		}
		if t := contextsvc.EventType(args[0]); !t.Known() {
			return usagef("%q is not an event type%s; the types are %s", args[0], nearestType(args[0]), typeNames())
		}
		return nil
	}
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		o.typ = contextsvc.EventType(args[0])
		return triggerRun(cmd.Context(), o)
	})
	return cmd
}

// aboutContext reports whether events of typ are about a context.
func aboutContext(typ contextsvc.EventType) bool {
	return typ != contextsvc.EventTeamMemberAdded && typ != contextsvc.EventTeamMemberRemoved
}

func triggerRun(ctx context.Context, o *triggerOptions) error {
	ovs, err := parseOverrides(o.overrides)
	if err != nil {
		return err
	}
	fixture, err := readFixture(o.fixture, o.s.in, o.typ)
	if err != nil {
		return err
	}
	own := len(ovs) > 0 || fixture != nil
	if o.contextID != "" && !aboutContext(o.typ) {
		return usagef("%s is not about a context: --context does not go with it", o.typ)
	}
	if own {
		// Held to the contract on made-up data first: a field it does not
		// have is refused before anything is sent.
		d, err := newEventData(o.typ, madeUpData(o.typ, nil, nil, nil, ""), fixture, o.fixture, ovs)
		if err != nil {
			return err
		}
		if err := d.check(); err != nil {
			return err
		}
	}
	c, err := o.api.client()
	if err != nil {
		return err
	}
	admin, kind := probe(ctx, o.s.mockAdmin(c.BaseURL()))
	switch kind {
	case kindLockedMock:
		return admin.lockedError()
	case kindMock:
		return triggerOnMock(ctx, o, c, admin, fixture, ovs)
	}
	if own {
		return unsupportedf("a deployment makes each event's data itself: --fixture and --override work on the mock (contextsvc mock), through its admin API")
	}
	if o.contextID != "" {
		return exportOnDeployment(ctx, o, c)
	}
	return triggerOnDeployment(ctx, o.s, c, o.typ)
}

// randomID is prefix and 26 random characters, as the service's ids.
func randomID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// keyAccount finds the account and user of the key on the mock: the
// account of a context the key sees (contextID, or one c lists) when
// there is one, else the account with a key that shows as the key does
// (the admin API masks tokens). Keys of two accounts may show alike:
// then only a context tells them apart.
func keyAccount(ctx context.Context, admin *mockAdmin, c *contextsvc.Client, key, contextID string) (account, user string, err error) {
	accounts, err := admin.accounts(ctx)
	if err != nil {
		return "", "", err
	}
	masked := mockserver.MaskToken(key)
	// The user of an account's key that shows as the key does, else the
	// account's first user.
	var alike []string
	users := map[string]string{}
	for _, a := range accounts {
		if len(a.Users) > 0 {
			users[a.ID] = a.Users[0]
		}
		for _, k := range a.Keys {
			if k.Token == masked {
				alike = append(alike, a.ID)
				users[a.ID] = k.User
				break
			}
		}
	}
	if contextID == "" && len(alike) > 1 && c != nil {
		// Through /v1 with the key: a context it lists is its account's.
		page, err := c.Contexts.List(ctx, &contextsvc.ContextListOptions{Limit: 1})
		if err != nil {
			return "", "", err
		}
		if len(page.Data) > 0 {
			contextID = page.Data[0].ID
		}
	}
	if contextID != "" {
		mc, err := admin.context(ctx, contextID)
		if err != nil {
			return "", "", err
		}
		return mc.Account, cmp.Or(users[mc.Account], mockserver.AccountUser(mc.Account)), nil
	}
	switch len(alike) {
	case 0:
		return "", "", errors.New("the key is none of the mock's keys as its admin API lists them")
	case 1:
		return alike[0], users[alike[0]], nil
	}
	return "", "", fmt.Errorf("keys of the mock's accounts %s show as the key does (%s) in its admin API, and the key's account has no context to tell which is its own: "+
		"give the mock's keys different endings, or create a context with the key first", strings.Join(alike, ", "), masked)
}

// triggerOnMock fires the event through the mock's admin API, with the
// data of the key's account's context (--context's, or its oldest) and
// the data of your own over it.
func triggerOnMock(ctx context.Context, o *triggerOptions, c *contextsvc.Client, admin *mockAdmin, fixture map[string]any, ovs []override) error {
	// Through /v1 with the key: the context is one the key's account has,
	// and a wrong key fails here with the service's 401.
	var cx *contextsvc.Context
	if o.contextID != "" {
		x, err := c.Contexts.Get(ctx, o.contextID)
		if err != nil {
			return err
		}
		cx = x
	} else if aboutContext(o.typ) {
		page, err := c.Contexts.List(ctx, &contextsvc.ContextListOptions{Limit: 1})
		if err != nil {
			return err
		}
		if len(page.Data) > 0 {
			cx = page.Data[0]
		}
	}
	contextID := ""
	if cx != nil {
		contextID = cx.ID
	}
	account, user, err := keyAccount(ctx, admin, c, o.api.key(), contextID)
	if err != nil {
		return err
	}
	var first, latest *mockVersion
	about := ""
	switch {
	case !aboutContext(o.typ):
	case cx == nil:
		// Said once the made-up context has its id.
	default:
		about = fmt.Sprintf(", about %s %q", cell(cx.ID, 80), cell(cx.Name, 100))
		if first, err = admin.version(ctx, contextID, "asc"); err != nil {
			return err
		}
		if latest, err = admin.version(ctx, contextID, "desc"); err != nil {
			return err
		}
	}
	own := len(ovs) > 0 || fixture != nil
	var ev *mockserver.Event
	if o.typ == contextsvc.EventContextPublished && contextID != "" && !own {
		// The mock's own action for it.
		ev, err = admin.publish(ctx, contextID)
	} else {
		d, derr := newEventData(o.typ, madeUpData(o.typ, cx, first, latest, user), fixture, o.fixture, ovs)
		if derr != nil {
			return derr
		}
		if cx == nil && aboutContext(o.typ) {
			about = fmt.Sprintf(", about a made-up context %s: the account has none", cell(fmt.Sprint(d.fields["contextId"]), 80))
		}
		if own {
			if err := d.check(); err != nil {
				return err
			}
			about += " (with your data)"
		}
		ev, err = admin.emit(ctx, o.typ, d.fields, account)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.s.out, "Triggered %s: event %s in the mock's account %s%s\n", o.typ, cell(ev.ID, 80), cell(ev.Account, 80), about)
	return err
}

// madeUpData is the data of an event of typ about cx (its first and
// latest versions, by user), or about a context made up when cx is nil;
// a team event's is made up.
func madeUpData(typ contextsvc.EventType, cx *contextsvc.Context, first, latest *mockVersion, user string) map[string]any {
	if user == "" {
		user = randomID("user_")
	}
	if cx == nil {
		// A context that could be the account's, at its second version.
		cx = &contextsvc.Context{ID: randomID("ctx_"), Name: "Example context", Tags: []string{}, Version: 2}
		first = &mockVersion{Version: 1, Name: cx.Name, Tags: cx.Tags, CreatedBy: user,
			Changes: contextsvc.Changes{SectionsModified: []string{"(preamble)"}, WordCountDelta: 2}, SizeBytes: 15}
		latest = &mockVersion{Version: 2, Name: cx.Name, Tags: cx.Tags, CreatedBy: user,
			Changes: contextsvc.Changes{SectionsModified: []string{"(preamble)"}, WordCountDelta: 3}, SizeBytes: 32}
	}
	if latest.Changes.SectionsModified == nil {
		latest.Changes.SectionsModified = []string{}
	}
	tagsOr := func(t []string) []string {
		if t == nil {
			return []string{}
		}
		return t
	}
	switch typ {
	case contextsvc.EventContextCreated:
		return map[string]any{"contextId": cx.ID, "name": first.Name, "version": first.Version, "tags": tagsOr(first.Tags), "createdBy": first.CreatedBy}
	case contextsvc.EventContextUpdated:
		return map[string]any{"contextId": cx.ID, "name": cx.Name, "version": latest.Version, "updatedBy": latest.CreatedBy, "changes": latest.Changes}
	case contextsvc.EventContextVersionCreated:
		return map[string]any{"contextId": cx.ID, "version": latest.Version, "createdBy": latest.CreatedBy}
	case contextsvc.EventContextDeleted:
		return map[string]any{"contextId": cx.ID, "name": cx.Name, "deletedBy": user}
	case contextsvc.EventContextPublished:
		return map[string]any{"contextId": cx.ID, "name": cx.Name, "version": latest.Version, "publishedBy": user}
	case contextsvc.EventExportCompleted:
		return map[string]any{"exportId": randomID("exp_"), "contextId": cx.ID, "version": latest.Version, "format": string(contextsvc.ExportMarkdown), "sizeBytes": latest.SizeBytes}
	}
	return map[string]any{"teamId": randomID("team_"), "userId": randomID("user_"), "role": "member"}
}

// exportOnDeployment fires export.completed on a deployment by exporting
// --context's context: the one /v1 action on an existing context that
// changes nothing.
func exportOnDeployment(ctx context.Context, o *triggerOptions, c *contextsvc.Client) error {
	if o.typ != contextsvc.EventExportCompleted {
		return unsupportedf("on a deployment, --context goes with export.completed alone (an export changes nothing); "+
			"%s would change or delete your context: do that with contextsvc contexts, or trigger it on the mock", o.typ)
	}
	exp, err := c.Contexts.Export(ctx, o.contextID, &contextsvc.ExportOptions{Format: contextsvc.ExportMarkdown})
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, io.LimitReader(exp.Body, 16<<20))
	exp.Body.Close()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.s.out, "Triggered %s at %s: exported %s\n", o.typ, c.BaseURL(), cell(o.contextID, 80))
	return err
}

// triggerOnDeployment fires the event by the /v1 action that causes it,
// on a temporary context it deletes.
func triggerOnDeployment(ctx context.Context, s *streams, c *contextsvc.Client, typ contextsvc.EventType) (err error) {
	switch typ {
	case contextsvc.EventTeamMemberAdded, contextsvc.EventTeamMemberRemoved, contextsvc.EventContextPublished:
		return unsupportedf("%s cannot be caused through the /v1 API of a deployment (it has no endpoint for it); "+
			"on the mock (contextsvc mock), trigger fires it through the mock's admin API", typ)
	}
	var b [5]byte
	_, _ = rand.Read(b[:])
	name := triggerPrefix + strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
	x, err := c.Contexts.Create(ctx, &contextsvc.CreateContextRequest{
		Name:    name,
		Content: "# contextsvc trigger\n\nA temporary context, made to fire an event and deleted at once.\n",
	})
	if err != nil {
		return err
	}
	deleted := false
	defer func() {
		if deleted {
			return
		}
		// Also after an interrupt: the context must not stay behind.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if _, derr := c.Contexts.Delete(cctx, x.ID); derr != nil {
			err = errors.Join(err, fmt.Errorf("the temporary context %s (%s) could not be deleted: %w; delete it with: contextsvc contexts delete %s", x.ID, name, derr, x.ID))
		}
	}()
	did := "created and deleted"
	switch typ {
	case contextsvc.EventContextUpdated:
		if _, err := c.Contexts.Update(ctx, x.ID, &contextsvc.UpdateContextRequest{Content: contextsvc.Ptr(x.Content + "\n## Updated\n\nBy contextsvc trigger.\n")}); err != nil {
			return err
		}
		did = "created, updated and deleted"
	case contextsvc.EventExportCompleted:
		exp, err := c.Contexts.Export(ctx, x.ID, &contextsvc.ExportOptions{Format: contextsvc.ExportMarkdown})
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, io.LimitReader(exp.Body, 16<<20))
		exp.Body.Close()
		if err != nil {
			return err
		}
		did = "created, exported and deleted"
	}
	if _, err := c.Contexts.Delete(ctx, x.ID); err != nil {
		return err
	}
	deleted = true
	others := map[contextsvc.EventType]string{
		contextsvc.EventContextCreated:        "context.version.created and context.deleted",
		contextsvc.EventContextVersionCreated: "context.created and context.deleted",
		contextsvc.EventContextDeleted:        "context.created and context.version.created",
	}[typ]
	if others == "" {
		others = "context.created, context.version.created and context.deleted"
	}
	_, err = fmt.Fprintf(s.out, "Triggered %s at %s: %s the temporary context %s (%s); its %s fired too\n",
		typ, cell(c.BaseURL(), 300), did, cell(x.ID, 80), cell(name, 200), others)
	return err
}
