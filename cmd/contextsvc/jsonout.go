package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/itchyny/gojq"
	"github.com/spf13/cobra"
)

// jsonOutput is --json and --jq: the JSON of the answer as it came, for
// scripts, or what a jq expression makes of it (gojq, the jq language in
// Go), as gh's --jq does.
type jsonOutput struct {
	on   bool
	expr string
	code *gojq.Code
	tty  bool // stdout is a terminal: jq's values indented
}

// addJSONFlags gives cmd --json, which prints what (the API's context, a
// page object…), and --jq. The expression is compiled before the command
// runs: a bad one is a usage error, and nothing is sent.
func addJSONFlags(cmd *cobra.Command, s *streams, what string) *jsonOutput {
	j := &jsonOutput{tty: s.outTTY}
	cmd.Flags().BoolVar(&j.on, "json", false, "print "+what+", for scripts")
	cmd.Flags().StringVar(&j.expr, "jq", "", "filter the JSON with a jq `expression` and print what it gives, strings without quotes; implies --json (default none)")
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if prev != nil {
			if err := prev(cmd, args); err != nil {
				return err
			}
		}
		return j.compile()
	}
	return j
}

// enabled reports whether the output is JSON (--json, or --jq).
func (j *jsonOutput) enabled() bool { return j != nil && (j.on || j.expr != "") }

// compile reads the --jq expression.
func (j *jsonOutput) compile() error {
	if j.expr == "" {
		return nil
	}
	q, err := gojq.Parse(j.expr)
	if err != nil {
		return usagef("--jq: %v", err)
	}
	if j.code, err = gojq.Compile(q); err != nil {
		return usagef("--jq: %v", err)
	}
	return nil
}

// write writes one JSON document: as it came, or through the --jq
// expression, each value it gives on a line of its own.
func (j *jsonOutput) write(ctx context.Context, w io.Writer, doc []byte) error {
	if j.code == nil {
		return writeRaw(w, doc)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // numbers as they were written: ids and sizes keep every digit
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("--jq: the answer is not JSON: %w", err)
	}
	// Each value is written as it comes (through a small buffer), so an
	// expression that yields without end holds one value at a time.
	out := bufio.NewWriter(w)
	iter := j.code.RunWithContext(ctx, v)
	for {
		x, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := x.(error); ok {
			var he *gojq.HaltError
			if errors.As(err, &he) && he.Value() == nil {
				break
			}
			out.Flush()
			return fmt.Errorf("--jq: %w", err)
		}
		if s, ok := x.(string); ok {
			if j.tty {
				s = safeText(s)
			}
			out.WriteString(s)
			if err := out.WriteByte('\n'); err != nil {
				return err
			}
			continue
		}
		b, err := gojq.Marshal(x)
		if err != nil {
			out.Flush()
			return fmt.Errorf("--jq: %w", err)
		}
		if j.tty {
			var ind bytes.Buffer
			if json.Indent(&ind, b, "", "  ") == nil {
				b = ind.Bytes()
			}
		}
		out.Write(b)
		if err := out.WriteByte('\n'); err != nil {
			return err
		}
	}
	return out.Flush()
}
