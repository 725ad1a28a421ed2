package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// commandVersion is the module version the command was built from (go
// install …@v1.2.3 records it), else the SDK's.
func commandVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return contextsvc.SDKVersion
}

func newVersionCmd(s *streams) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the command's version, the SDK's and Go's",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the versions as a JSON object")
	cmd.RunE = action(func(cmd *cobra.Command, args []string) error {
		if asJSON {
			b, _ := json.Marshal(map[string]string{"version": commandVersion(), "sdk": contextsvc.SDKVersion,
				"go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH})
			_, err := fmt.Fprintf(s.out, "%s\n", b)
			return err
		}
		_, err := fmt.Fprintln(s.out, versionLine())
		return err
	})
	return cmd
}

// versionLine is what version and --version print.
func versionLine() string {
	return fmt.Sprintf("contextsvc %s (SDK contextsvc-go %s, %s %s/%s)",
		commandVersion(), contextsvc.SDKVersion, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
