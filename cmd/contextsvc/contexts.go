package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// maxContentBytes is the most content the service takes (1,000,000
// bytes); --file reads one byte more, to tell a file that is too large.
const maxContentBytes = 1_000_000

func newContextsCmd(s *streams) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:     "contexts",
		Aliases: []string{"context", "ctx"},
		Short:   "List, read, create, update, delete and export contexts",
	})
	cmd.AddCommand(
		newContextsListCmd(s),
		newContextsGetCmd(s),
		newContextsCreateCmd(s),
		newContextsUpdateCmd(s),
		newContextsDeleteCmd(s),
		newContextsVersionsCmd(s),
		newContextsExportCmd(s),
	)
	return cmd
}

func newContextsListCmd(s *streams) *cobra.Command {
	var (
		tags   []string
		limit  int
		cursor string
		all    bool
		quiet  bool
	)
	cmd := &cobra.Command{
		Use:     "list [--tag T]... [--limit N] [--all]",
		Aliases: []string{"ls"},
		Short:   "List contexts, oldest first: a page, or every page with --all",
		Example: `  contextsvc contexts list --tag ops
  contextsvc contexts list --all --json | jq -r '.data[].id'`,
		Args: cobra.NoArgs,
	}
	api := addAPIFlags(cmd, s)
	fs := cmd.Flags()
	fs.StringArrayVar(&tags, "tag", nil, "keep only the contexts that have this `tag`, repeatable: all of them (default none: every context)")
	fs.IntVar(&limit, "limit", 20, "contexts per page, 1 to 100")
	fs.StringVar(&cursor, "cursor", "", "start after a previous page: its nextCursor (default none: the first page)")
	fs.BoolVar(&all, "all", false, "every page, not just one (with --json, each page object in turn)")
	fs.BoolVarP(&quiet, "quiet", "q", false, "print only the ids, one a line")
	asJSON := addJSONFlags(cmd, s, "the API's JSON as it came: the page object (with --all, each page object in turn)")
	cmd.MarkFlagsMutuallyExclusive("json", "quiet")
	cmd.MarkFlagsMutuallyExclusive("jq", "quiet")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		if limit < 1 || limit > 100 {
			return usagef("--limit must be 1 to 100, got %d", limit)
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		opts := &contextsvc.ContextListOptions{Limit: limit, Cursor: cursor, Tags: tags}
		l := listing[contextsvc.Context]{
			noun:   "contexts",
			empty:  "No contexts.",
			header: []string{"ID", "NAME", "TAGS", "VERSION", "UPDATED"},
			row: func(t *table, x *contextsvc.Context) []string {
				return []string{t.cell(x.ID, 80), t.cell(x.Name, 50), tagList(x.Tags, t.width(40)), fmt.Sprint(x.Version), when(x.UpdatedAt)}
			},
			id:    func(x *contextsvc.Context) string { return x.ID },
			quiet: quiet,
		}
		return listPages(cmd.Context(), s, l, all, asJSON,
			func(ro ...contextsvc.RequestOption) ([]*contextsvc.Context, bool, string, error) {
				page, err := c.Contexts.List(cmd.Context(), opts, ro...)
				if err != nil {
					return nil, false, "", err
				}
				return page.Data, page.HasMore, page.NextCursor, nil
			},
			func(ro ...contextsvc.RequestOption) iter.Seq2[*contextsvc.Context, error] {
				return c.Contexts.All(cmd.Context(), opts, ro...)
			})
	})
	return cmd
}

// contextIDArg is the argument of the commands on one context: its id,
// completed from the account's contexts.
func contextIDArg(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("%s takes one argument, the context's id (ctx_…), got %d", cmd.CommandPath(), len(args))
	}
	if strings.TrimSpace(args[0]) == "" {
		return usagef("the context id is empty")
	}
	return nil
}

// completeContextIDs completes a context id from the first page of the
// account's contexts, each with its name. Without a key it offers none.
func completeContextIDs(api *apiFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := api.client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		// A shell waits for the answer: a short wait, no retry.
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		page, err := c.Contexts.List(ctx, &contextsvc.ContextListOptions{Limit: 100}, contextsvc.WithRequestMaxRetries(0))
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, x := range page.Data {
			if strings.HasPrefix(x.ID, toComplete) {
				out = append(out, cobra.CompletionWithDesc(x.ID, cell(x.Name, 50)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completionTimeout bounds the request that completes a context id.
const completionTimeout = 3 * time.Second

// oneContextCmd makes a command on one context, with the service's flags.
func oneContextCmd(s *streams, c *cobra.Command) (*cobra.Command, *apiFlags) {
	api := addAPIFlags(c, s)
	c.Args = contextIDArg
	c.ValidArgsFunction = completeContextIDs(api)
	return c, api
}

func newContextsGetCmd(s *streams) *cobra.Command {
	cmd, api := oneContextCmd(s, &cobra.Command{
		Use:   "get ID",
		Short: "Show one context, its content included",
	})
	asJSON := addJSONFlags(cmd, s, "the API's JSON of the context as it came")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		c, err := api.client()
		if err != nil {
			return err
		}
		var raw rawBody
		x, err := c.Contexts.Get(cmd.Context(), args[0], raw.option())
		if err != nil {
			return err
		}
		if asJSON.enabled() {
			return asJSON.write(cmd.Context(), s.out, raw.bytes())
		}
		return writeContext(s, x)
	})
	return cmd
}

// writeContext shows a context: its fields, then its content.
func writeContext(s *streams, x *contextsvc.Context) error {
	bold := paint(s.colorOK(s.outTTY))
	var b strings.Builder
	field := func(name, value string) {
		fmt.Fprintf(&b, "%s %s\n", bold.style(styleBold, fmt.Sprintf("%-8s", name)), value)
	}
	field("ID", cell(x.ID, 200))
	field("Name", cell(x.Name, 300))
	field("Tags", tagList(x.Tags, 200))
	field("Version", fmt.Sprint(x.Version))
	field("Created", when(x.CreatedAt))
	field("Updated", when(x.UpdatedAt))
	content := x.Content
	if s.outTTY {
		content = safeText(content)
	}
	if content != "" {
		b.WriteString("\n" + content)
		if !strings.HasSuffix(content, "\n") {
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(s.out, b.String())
	return err
}

// contentFlags are --content and --file: the content given inline, read
// from a file, or from stdin (--file -).
type contentFlags struct {
	content string
	file    string
}

func (f *contentFlags) add(cmd *cobra.Command, contentUsage string) {
	cmd.Flags().StringVar(&f.content, "content", "", contentUsage)
	cmd.Flags().StringVar(&f.file, "file", "", "read the content from this `path`, or from stdin with --file - (default none)")
	cmd.MarkFlagsMutuallyExclusive("content", "file")
}

// given reports whether either flag was given.
func (f *contentFlags) given(cmd *cobra.Command) bool {
	return cmd.Flags().Changed("content") || cmd.Flags().Changed("file")
}

// read returns the content the flags give.
func (f *contentFlags) read(cmd *cobra.Command, s *streams) (string, error) {
	if !cmd.Flags().Changed("file") {
		return f.content, nil
	}
	if f.file == "" {
		return "", usagef("--file needs a path, or - for stdin")
	}
	var r io.Reader
	name := f.file
	if f.file == "-" {
		r, name = s.in, "stdin"
	} else {
		file, err := os.Open(f.file)
		if err != nil {
			return "", usagef("--file: %v", err)
		}
		defer file.Close()
		r = file
	}
	b, err := io.ReadAll(io.LimitReader(r, maxContentBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", name, err)
	}
	if len(b) > maxContentBytes {
		return "", usagef("--file: %s holds more than %d bytes, the most a context's content may have", name, maxContentBytes)
	}
	return string(b), nil
}

func newContextsCreateCmd(s *streams) *cobra.Command {
	var (
		name    string
		content contentFlags
		tags    []string
		quiet   bool
	)
	cmd := &cobra.Command{
		Use:   "create --name N (--content TEXT | --file PATH | --file -) [--tag T]...",
		Short: "Create a context",
		Example: `  contextsvc contexts create --name "Deploy runbook" --content "# Deploy" --tag ops
  contextsvc contexts create --name Notes --file notes.md
  id=$(echo "# Draft" | contextsvc contexts create --name Draft --file - -q)`,
		Args: cobra.NoArgs,
	}
	api := addAPIFlags(cmd, s)
	fs := cmd.Flags()
	fs.StringVar(&name, "name", "", "the context's `name`, 1 to 200 characters (required)")
	content.add(cmd, "the Markdown `text` (default empty)")
	fs.StringArrayVar(&tags, "tag", nil, "a `tag`, repeatable (default none)")
	fs.BoolVarP(&quiet, "quiet", "q", false, "print only the new context's id")
	asJSON := addJSONFlags(cmd, s, "the API's JSON of the new context as it came")
	cmd.MarkFlagsMutuallyExclusive("json", "quiet")
	cmd.MarkFlagsMutuallyExclusive("jq", "quiet")
	_ = cmd.MarkFlagRequired("name")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		text, err := content.read(cmd, s)
		if err != nil {
			return err
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		var raw rawBody
		x, err := c.Contexts.Create(cmd.Context(), &contextsvc.CreateContextRequest{Name: name, Content: text, Tags: tags}, raw.option())
		if err != nil {
			return err
		}
		switch {
		case asJSON.enabled():
			return asJSON.write(cmd.Context(), s.out, raw.bytes())
		case quiet:
			_, err = fmt.Fprintln(s.out, s.plainID(x.ID))
		default:
			_, err = fmt.Fprintf(s.out, "Created %s %q (version %d)\n", cell(x.ID, 80), cell(x.Name, 200), x.Version)
		}
		return err
	})
	return cmd
}

func newContextsUpdateCmd(s *streams) *cobra.Command {
	var (
		name      string
		content   contentFlags
		tags      []string
		clearTags bool
	)
	cmd, api := oneContextCmd(s, &cobra.Command{
		Use:   "update ID [--name N] [--content TEXT | --file PATH] [--tag T]... [--clear-tags]",
		Short: "Update a context: the fields given replace, the others stay",
		Long: `Update a context: the fields given replace, the others stay. --tag replaces
the tags with those given; --clear-tags removes them all. When nothing
differs, the context stays at its version.`,
		Example: `  contextsvc contexts update ctx_123 --file runbook.md
  contextsvc contexts update ctx_123 --tag ops --tag prod`,
	})
	fs := cmd.Flags()
	fs.StringVar(&name, "name", "", "the new `name` (default: unchanged)")
	content.add(cmd, "the new Markdown `text` (default: unchanged)")
	fs.StringArrayVar(&tags, "tag", nil, "replace the tags with these, repeatable (default: unchanged)")
	fs.BoolVar(&clearTags, "clear-tags", false, "remove every tag")
	asJSON := addJSONFlags(cmd, s, "the API's JSON of the context as it came")
	cmd.MarkFlagsMutuallyExclusive("tag", "clear-tags")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		req := &contextsvc.UpdateContextRequest{}
		if cmd.Flags().Changed("name") {
			req.Name = &name
		}
		if content.given(cmd) {
			text, err := content.read(cmd, s)
			if err != nil {
				return err
			}
			req.Content = &text
		}
		switch {
		case clearTags:
			req.Tags = []string{}
		case cmd.Flags().Changed("tag"):
			req.Tags = tags
		}
		if req.Name == nil && req.Content == nil && req.Tags == nil {
			return usagef("nothing to update: give --name, --content, --file, --tag or --clear-tags")
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		var raw rawBody
		if asJSON.enabled() {
			if _, err := c.Contexts.Update(cmd.Context(), args[0], req, raw.option()); err != nil {
				return err
			}
			return asJSON.write(cmd.Context(), s.out, raw.bytes())
		}
		// The answer is the same whether or not something changed: the
		// version before tells them apart.
		before, err := c.Contexts.Get(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		x, err := c.Contexts.Update(cmd.Context(), args[0], req)
		if err != nil {
			return err
		}
		if x.Version == before.Version {
			_, err = fmt.Fprintf(s.out, "Unchanged: %s %q stays at version %d (what was given is what it holds)\n", cell(x.ID, 80), cell(x.Name, 200), x.Version)
			return err
		}
		_, err = fmt.Fprintf(s.out, "Updated %s %q: now at version %d\n", cell(x.ID, 80), cell(x.Name, 200), x.Version)
		return err
	})
	return cmd
}

func newContextsDeleteCmd(s *streams) *cobra.Command {
	cmd, api := oneContextCmd(s, &cobra.Command{
		Use:     "delete ID",
		Aliases: []string{"rm"},
		Short:   "Delete a context (no confirmation is asked)",
	})
	asJSON := addJSONFlags(cmd, s, `the API's JSON as it came: {"id","deleted"}`)
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		c, err := api.client()
		if err != nil {
			return err
		}
		var raw rawBody
		res, err := c.Contexts.Delete(cmd.Context(), args[0], raw.option())
		if err != nil {
			return err
		}
		if asJSON.enabled() {
			return asJSON.write(cmd.Context(), s.out, raw.bytes())
		}
		_, err = fmt.Fprintf(s.out, "Deleted %s\n", cell(res.ID, 80))
		return err
	})
	return cmd
}

func newContextsVersionsCmd(s *streams) *cobra.Command {
	var (
		limit  int
		cursor string
		all    bool
	)
	cmd, api := oneContextCmd(s, &cobra.Command{
		Use:   "versions ID [--all]",
		Short: "List a context's versions, oldest first: a page, or every page with --all",
	})
	fs := cmd.Flags()
	fs.IntVar(&limit, "limit", 20, "versions per page, 1 to 100")
	fs.StringVar(&cursor, "cursor", "", "start after a previous page: its nextCursor (default none: the first page)")
	fs.BoolVar(&all, "all", false, "every page, not just one (with --json, each page object in turn)")
	asJSON := addJSONFlags(cmd, s, "the API's JSON as it came: the page object (with --all, each page object in turn)")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		if limit < 1 || limit > 100 {
			return usagef("--limit must be 1 to 100, got %d", limit)
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		opts := &contextsvc.VersionListOptions{Limit: limit, Cursor: cursor}
		l := listing[contextsvc.Version]{
			noun:   "versions",
			header: []string{"VERSION", "NAME", "TAGS", "CREATED", "CREATED BY", "WORDS", "SECTIONS CHANGED"},
			row: func(t *table, v *contextsvc.Version) []string {
				sections := "-"
				if len(v.Changes.SectionsModified) > 0 {
					sections = t.cell(strings.Join(v.Changes.SectionsModified, ", "), 60)
				}
				return []string{fmt.Sprint(v.Version), t.cell(v.Name, 40), tagList(v.Tags, t.width(40)), when(v.CreatedAt), t.cell(v.CreatedBy, 40),
					signed(v.Changes.WordCountDelta), sections}
			},
		}
		return listPages(cmd.Context(), s, l, all, asJSON,
			func(ro ...contextsvc.RequestOption) ([]*contextsvc.Version, bool, string, error) {
				page, err := c.Contexts.ListVersions(cmd.Context(), args[0], opts, ro...)
				if err != nil {
					return nil, false, "", err
				}
				return page.Data, page.HasMore, page.NextCursor, nil
			},
			func(ro ...contextsvc.RequestOption) iter.Seq2[*contextsvc.Version, error] {
				return c.Contexts.AllVersions(cmd.Context(), args[0], opts, ro...)
			})
	})
	return cmd
}
