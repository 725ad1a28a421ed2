package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/contextsvc/contextsvc-go/mockserver/cmdline"
)

// passthroughCmds are contextsvc mock and contextsvc conform: the code of
// contextsvc-mock and contextsvc-conform, given the command line as it
// is, so their flags, help, output and exit codes are exactly those
// commands'.
func passthroughCmds(s *streams) []*cobra.Command {
	return []*cobra.Command{
		passthrough(s, "mock", "Serve the mock server (the flags of contextsvc-mock; --help lists them)", cmdline.Mock),
		passthrough(s, "conform", "Check a deployment against the API contract (the flags of contextsvc-conform; --help lists them)", cmdline.Conform),
	}
}

// passthrough makes a command that hands its arguments, unparsed, to run
// (which names itself "contextsvc NAME" in its help and errors). Its help
// is run's own (--help), for contextsvc help NAME as well.
func passthrough(s *streams, name, short string, run func(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int) *cobra.Command {
	cmd := &cobra.Command{
		Use:                name + " [flags]",
		Short:              short,
		DisableFlagParsing: true,
		// Its flags are run's: there are none to complete here.
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if code := run(cmd.Context(), cmd.CommandPath(), args, s.out, s.err); code != 0 {
			return &exitStatus{code}
		}
		return nil
	}
	cmd.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		run(cmd.Context(), cmd.CommandPath(), []string{"--help"}, s.out, s.err)
	})
	return cmd
}
