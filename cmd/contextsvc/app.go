package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redact"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // an API or network error, or a failure to act
	exitUsage = 2 // an unknown command or flag, a flag missing, flags that conflict, no key
	// exitUnsupported: the server has no way to do what was asked (a
	// deployment, for what only the mock's admin API does).
	exitUnsupported = 3
)

// usageError is a mistake in the command line or its configuration: it
// exits 2. Every error cobra itself returns (unknown command or flag, a
// missing required flag, the wrong number of arguments) is one too.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// unsupportedError is a request the server cannot serve: what only the
// mock's admin API does, asked of a deployment. It exits 3.
type unsupportedError struct{ msg string }

func (e *unsupportedError) Error() string { return e.msg }

func unsupportedf(format string, a ...any) error {
	return &unsupportedError{fmt.Sprintf(format, a...)}
}

// failure is an error of a command that ran: an API or network error, a
// file that cannot be written. It exits 1.
type failure struct{ err error }

func (e *failure) Error() string { return e.err.Error() }
func (e *failure) Unwrap() error { return e.err }

// action adapts a command's function: its errors are failures (exit 1)
// unless they are usage errors.
func action(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := fn(cmd, args)
		var ue *usageError
		var un *unsupportedError
		if err == nil || errors.As(err, &ue) || errors.As(err, &un) {
			return err
		}
		return &failure{err}
	}
}

// run runs the command line args and returns the exit code.
func run(ctx context.Context, args []string, s *streams) int {
	root := newRootCmd(s)
	root.SetArgs(args)
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.err)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var es *exitStatus
	if errors.As(err, &es) {
		return es.code
	}
	return reportError(s, cmd, err)
}

// exitStatus ends a command that has reported its own errors (mock and
// conform) with its exit code.
type exitStatus struct{ code int }

func (e *exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// reportError writes err on stderr and returns the exit code.
func reportError(s *streams, cmd *cobra.Command, err error) int {
	red := paint(s.colorOK(s.errTTY))
	var un *unsupportedError
	// Every message is made inert (safeText): it can hold what a server
	// answered, an id or a name, which must not drive the terminal.
	if errors.As(err, &un) {
		fmt.Fprintf(s.err, "%s %s\n", red.style(styleRed, "Error:"), safeText(un.msg))
		return exitUnsupported
	}
	var f *failure
	if !errors.As(err, &f) {
		fmt.Fprintf(s.err, "%s %s\n", red.style(styleRed, "Error:"), safeText(usageText(err)))
		if cmd != nil {
			fmt.Fprintf(s.err, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return exitUsage
	}
	if errors.Is(f.err, contextsvc.ErrInvalidArgument) {
		// The SDK refused, before sending anything, a value the command
		// was given (an id that would not stay one path segment, say).
		fmt.Fprintf(s.err, "%s %s\n", red.style(styleRed, "Error:"), safeText(describeError(f.err)))
		if cmd != nil {
			fmt.Fprintf(s.err, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return exitUsage
	}
	msg := describeError(f.err)
	if s.api != nil {
		if hint := s.api.hint(f.err); hint != "" {
			msg += ". " + hint
		}
	}
	fmt.Fprintf(s.err, "%s %s\n", red.style(styleRed, "Error:"), safeText(msg))
	return exitError
}

// exclusiveFlags is cobra's error for flags that do not go together.
var exclusiveFlags = regexp.MustCompile(`^if any flags in the group \[([^\]]*)\] are set none of the others can be; \[([^\]]*)\] were all set$`)

// usageText is a usage error's words: cobra's own for flags that
// conflict are said as a person would.
func usageText(err error) string {
	msg := strings.TrimPrefix(err.Error(), "contextsvc: ")
	if m := exclusiveFlags.FindStringSubmatch(msg); m != nil {
		names := strings.Fields(m[2])
		for i, n := range names {
			names[i] = "--" + n
		}
		list := names[len(names)-1]
		if len(names) > 1 {
			list = strings.Join(names[:len(names)-1], ", ") + " and " + list
		}
		return list + " cannot be used together: give one of them"
	}
	return msg
}

// describeError is one line about an error: for the service's answer its
// status, type, message, the field at fault and the request id; for
// anything else its text.
func describeError(err error) string {
	var ae *contextsvc.Error
	if !errors.As(err, &ae) {
		if errors.Is(err, context.Canceled) {
			return "interrupted"
		}
		msg := err.Error()
		// The SDK's transport errors start with its name; a url.Error
		// quotes the whole URL, which the call's path already names.
		var ue *url.Error
		if errors.As(err, &ue) {
			msg = ue.Op + " " + redact.URL(ue.URL) + ": " + ue.Err.Error()
		}
		return strings.ReplaceAll(msg, "contextsvc: ", "")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d", ae.StatusCode)
	if ae.Type != "" {
		b.WriteString(" " + ae.Type)
	}
	if ae.Message != "" {
		b.WriteString(": " + cell(ae.Message, 2000))
	}
	var notes []string
	if ae.Param != "" {
		notes = append(notes, "param "+cell(ae.Param, 100))
	}
	if ae.RequestID != "" {
		notes = append(notes, "request "+cell(ae.RequestID, 100))
	}
	if ae.Attempts > 1 {
		notes = append(notes, fmt.Sprintf("%d attempts", ae.Attempts))
	}
	if ae.RetryAfter > 0 {
		notes = append(notes, "retry after "+ae.RetryAfter.String())
	}
	if len(notes) > 0 {
		b.WriteString(" (" + strings.Join(notes, ", ") + ")")
	}
	return b.String()
}

// newRootCmd builds the command tree.
func newRootCmd(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "contextsvc",
		Short: "The Context Management Service from the terminal: contexts, webhooks, listen, trigger, replay, snapshot, the mock",
		Long: `contextsvc works with the Context Management Service: its contexts, their
versions and exports, webhooks, a receiver that forwards deliveries to your
app (listen), events fired on demand (trigger), a copy of a deployment's
contexts for the mock (snapshot), the mock server itself (mock) and the
contract runner (conform).

On the mock it also shows the events and deliveries and sends an event
again (events, deliveries), and moves its clock, sets its chaos mode and
empties it (clock, chaos, reset): the service's /v1 API has none of these,
so on a deployment they say so and exit 3.

It reads the server's base URL from CONTEXTSVC_BASE_URL and the API key from
CONTEXTSVC_API_KEY (--base-url and --api-key override them); contextsvc mock
prints both. It never prompts.

Output: tables for people (tab-separated rows without a header when stdout is
not a terminal), --json for the JSON as it came, --jq to filter it. --debug
(or CONTEXTSVC_DEBUG=1) shows each request on stderr, secrets masked. Errors
go to stderr. Exit status: 0 success, 1 an API or network error, 2 a usage
error, 3 what the server does not support (a deployment, for the mock's own).`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// A person who types a command name wrong gets the nearest one.
		SuggestionsMinimumDistance: 2,
		Version:                    commandVersion(),
	}
	// --version says what the version command says.
	root.SetVersionTemplate(versionLine() + "\n")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return &usageError{err.Error()} })
	root.PersistentFlags().BoolVar(&s.debug, "debug", false, "print each request and its answer on stderr (method, URL, headers, status, time, and each wait before a retry with its reason), keys and secrets masked; or set "+envDebug+"=1")
	root.AddCommand(
		newContextsCmd(s),
		newWebhooksCmd(s),
		newListenCmd(s),
		newTriggerCmd(s),
		newSnapshotCmd(s),
		newEventsCmd(s),
		newDeliveriesCmd(s),
		newClockCmd(s),
		newChaosCmd(s),
		newResetCmd(s),
		newVersionCmd(s),
	)
	for _, c := range passthroughCmds(s) {
		root.AddCommand(c)
	}
	return root
}

// group makes a command that only holds subcommands: alone it shows its
// help; with an argument that names none it is a usage error that
// suggests the nearest (cobra does so for the root's subcommands only).
func group(cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		return unknownCommand(cmd, args[0])
	}
	// "contexts lsit --limit 5" is a mistyped command rather than an
	// unknown flag of the group. Subcommands inherit the function: for
	// them ("contexts get ID --jsn") a flag error is the flag's.
	group := cmd
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if args := cmd.Flags().Args(); cmd == group && len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return &usageError{err.Error()}
	})
	return cmd
}

// unknownCommand is the usage error of a name that is none of cmd's
// subcommands, with the nearest ones.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if sug := cmd.SuggestionsFor(name); len(sug) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(sug, "\n\t") + "\n"
	}
	return &usageError{msg}
}
