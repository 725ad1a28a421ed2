// Package cliflags gives the commands built on the standard flag package
// (contextsvc-mock and contextsvc-conform, which contextsvc runs as its
// mock and conform commands) the manners of the contextsvc command: help
// on stdout with each flag written with two dashes, and a mistake said in
// one line followed by where to find the help, instead of the whole help
// after it.
package cliflags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Parse parses args into fs without writing anything: a mistake is
// returned for the caller to report (see [Report]); -h or --help writes
// the help to stdout (header, then the flags) and returns flag.ErrHelp.
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer, header string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(stdout, header)
		PrintDefaults(stdout, fs)
	}
	return err
}

// Report writes a usage mistake of the command name on w: the error on
// one line, then where the help is.
func Report(w io.Writer, name string, err error) {
	fmt.Fprintf(w, "%s: %v\nRun '%s --help' for usage.\n", name, err, name)
}

// PrintDefaults writes fs's flags as flag.PrintDefaults does, each with
// two dashes (--addr), as the rest of the contextsvc command writes its
// flags; both forms are accepted.
func PrintDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		fmt.Fprintf(&b, "  --%s", f.Name)
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			b.WriteString(" " + name)
		}
		b.WriteString("\n    \t")
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !isZeroValue(f) {
			format := " (default %v)"
			if g, ok := f.Value.(flag.Getter); ok {
				if _, ok := g.Get().(string); ok {
					format = " (default %q)"
				}
			}
			fmt.Fprintf(&b, format, f.DefValue)
		}
		b.WriteString("\n")
		io.WriteString(w, b.String())
	})
}

// isZeroValue reports whether the flag's default is its type's zero
// value, which flag.PrintDefaults leaves unsaid.
func isZeroValue(f *flag.Flag) (zero bool) {
	typ := reflect.TypeOf(f.Value)
	var z reflect.Value
	if typ.Kind() == reflect.Pointer {
		z = reflect.New(typ.Elem())
	} else {
		z = reflect.Zero(typ)
	}
	defer func() {
		if recover() != nil {
			zero = false // a Value whose zero cannot say its String
		}
	}()
	v, ok := z.Interface().(flag.Value)
	return ok && f.DefValue == v.String()
}
