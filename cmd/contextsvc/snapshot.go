package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

func newSnapshotCmd(s *streams) *cobra.Command {
	var (
		output  string
		account string
		force   bool
		maxSize = byteSize(defaultSnapshotMax)
	)
	cmd := &cobra.Command{
		Use:   "snapshot -o FILE [--account NAME] [--max-size SIZE] [--force]",
		Short: "Copy every context, with all its versions, into a state file the mock loads",
		Long: `Read every context and all its versions from the server (a key of read
scope is enough) and write a state document that the mock loads:

  contextsvc mock -state-file FILE

serves the same contexts, with the same ids, content, tags and version
history, in the account default (or --account: start the mock with a key of
that account, -key KEY:business:write:NAME). This is how a local mock
starts from a deployment's data.

Webhooks are left out: the API never returns their secrets. The document is
checked as the mock will load it before the file is written (whole, or not
at all); a file that is there already is replaced only with --force.

What it reads is held in memory until the file is written, so it stops,
writing nothing, once the server's answers come to more than --max-size
bytes (256MiB by default, what the mock takes as a state document): a
server whose contexts or pages never end cannot exhaust the machine.
Progress shows on stderr when it is a terminal.`,
		Example: `  CONTEXTSVC_BASE_URL=https://staging.example.com/v1 CONTEXTSVC_API_KEY=$STAGING_READ_KEY contextsvc snapshot -o staging.json
  contextsvc mock -state-file staging.json`,
		Args: cobra.NoArgs,
	}
	api := addAPIFlags(cmd, s)
	fs := cmd.Flags()
	fs.StringVarP(&output, "output", "o", "", "the state `file` to write (required)")
	fs.StringVar(&account, "account", mockserver.DefaultAccount, "the mock's account the contexts go to (1 to 64 of A-Z a-z 0-9 _ . -)")
	fs.BoolVar(&force, "force", false, "replace the file if it is there already")
	fs.Var(&maxSize, "max-size", "stop, writing nothing, once the server's answers come to more than this `size` (bytes, or with KiB, MiB, GiB)")
	_ = cmd.MarkFlagRequired("output")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		if output == "" || output == "-" {
			return usagef("-o needs a file (the mock reads its state from a file)")
		}
		if err := mockserver.ValidAccount(account); err != nil {
			return usagef("--account: %s", strings.TrimPrefix(err.Error(), "mockserver: "))
		}
		if maxSize <= 0 {
			return usagef("--max-size must be more than 0")
		}
		if err := checkTarget(output, force); err != nil {
			return err
		}
		c, err := api.client()
		if err != nil {
			return err
		}
		p := newProgress(s)
		budget := &sizeBudget{limit: int64(maxSize)}
		contexts, versions, err := readAll(cmd.Context(), c, account, p, budget.option())
		p.done()
		if budget.exceeded {
			return fmt.Errorf("the server's answers came to more than %s, the snapshot's limit (--max-size raises it): nothing was written", maxSize)
		}
		if err != nil {
			return err
		}
		if err := writeSnapshot(cmd.Context(), output, account, contexts, force); err != nil {
			return err
		}
		fmt.Fprintf(s.out, "Wrote %s: %s, %s, in the account %s.\n", output, plural(len(contexts), "context"), plural(versions, "version"), account)
		fmt.Fprintln(s.out, "Webhooks are left out: the API never returns their secrets; register them again on the mock.")
		load := "contextsvc mock -state-file " + shellQuote(output)
		if account != mockserver.DefaultAccount {
			load += " -key sk_test_KEY:business:write:" + account
		}
		fmt.Fprintf(s.out, "Serve it with: %s\n", load)
		return nil
	})
	return cmd
}

// readAll reads every context with all its versions, oldest first.
// Each call is made with ro (the size budget).
func readAll(ctx context.Context, c *contextsvc.Client, account string, p *progress, ro ...contextsvc.RequestOption) ([]mockserver.StoredContext, int, error) {
	var list []*contextsvc.Context
	for x, err := range c.Contexts.All(ctx, &contextsvc.ContextListOptions{Limit: 100}, ro...) {
		if err != nil {
			return nil, 0, err
		}
		list = append(list, x)
		p.listed(len(list))
	}
	out := make([]mockserver.StoredContext, 0, len(list))
	versions := 0
	for i, x := range list {
		sc := mockserver.StoredContext{Account: account, ID: x.ID, Name: x.Name, Content: x.Content, Tags: x.Tags,
			Version: x.Version, CreatedAt: x.CreatedAt, UpdatedAt: x.UpdatedAt}
		for v, err := range c.Contexts.AllVersions(ctx, x.ID, &contextsvc.VersionListOptions{Limit: 100}, ro...) {
			if errors.Is(err, contextsvc.ErrNotFound) && len(sc.Versions) == 0 {
				// Deleted since the list: it is left out, as it would be
				// from a list taken now.
				sc.Versions = nil
				break
			}
			if err != nil {
				return nil, 0, err
			}
			sc.Versions = append(sc.Versions, mockserver.StoredVersion{Version: v.Version, Name: v.Name, Content: v.Content,
				Tags: v.Tags, CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy, Changes: v.Changes})
		}
		p.read(i+1, len(list))
		if len(sc.Versions) == 0 {
			continue
		}
		versions += len(sc.Versions)
		out = append(out, sc)
	}
	return out, versions, nil
}

// statePath finds the context a state document's path names
// ("accounts[0].contexts[3].versions[1].name": the fourth).
var statePath = regexp.MustCompile(`^accounts\[0\]\.contexts\[(\d+)\](.*)$`)

// writeSnapshot writes the state document to path: first to a temporary
// file beside it, which a scratch mock loads as the mock will (so a
// document the mock would refuse is never written, and the error names the
// context at fault), then published under path (over a file there only
// with replace).
func writeSnapshot(ctx context.Context, path, account string, contexts []mockserver.StoredContext, replace bool) error {
	// Mode 0600, as the mock writes its state files.
	pf, err := createPending(path, 0o600)
	if err != nil {
		return err
	}
	defer pf.discard()
	if err := mockserver.WriteStateDocument(pf, contexts); err != nil {
		return targetError(path, err)
	}
	if err := pf.closeFile(); err != nil {
		return err
	}
	if err := checkState(ctx, pf.Name(), account, contexts); err != nil {
		return err
	}
	return pf.publish(replace)
}

// checkState loads the document at path into a scratch mock that has the
// account, as contextsvc mock -state-file will.
func checkState(ctx context.Context, path, account string, contexts []mockserver.StoredContext) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	srv := mockserver.New(mockserver.WithKey(mockserver.Key{Token: randomID("sk_check_"), Account: account}))
	defer srv.Close(context.WithoutCancel(ctx))
	err = srv.LoadState(f)
	var se *mockserver.StateError
	if errors.As(err, &se) {
		where := se.Path
		if m := statePath.FindStringSubmatch(se.Path); m != nil {
			if i, _ := strconv.Atoi(m[1]); i < len(contexts) {
				where = "the context " + contexts[i].ID + " (" + strconv.Quote(contexts[i].Name) + ")" + m[2]
			}
		}
		return fmt.Errorf("the mock could not load the snapshot, so it was not written: %s: %s", where, se.Message)
	}
	return err
}

// plural is n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// shellQuote quotes a path for a shell command line when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// progress is snapshot's bar on stderr, drawn only when stderr is a
// terminal.
type progress struct {
	w  io.Writer
	on bool
}

func newProgress(s *streams) *progress { return &progress{w: s.err, on: s.errTTY} }

const barWidth = 30

// listed tells how many contexts the listing found so far.
func (p *progress) listed(n int) {
	if p.on {
		fmt.Fprintf(p.w, "\r\x1b[KListing contexts: %d", n)
	}
}

// read tells how many contexts have their versions read, of total.
func (p *progress) read(n, total int) {
	if !p.on || total == 0 {
		return
	}
	filled := barWidth * n / total
	fmt.Fprintf(p.w, "\r\x1b[KReading versions [%s%s] %d/%d contexts", strings.Repeat("=", filled), strings.Repeat(" ", barWidth-filled), n, total)
}

// done ends the bar's line.
func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
