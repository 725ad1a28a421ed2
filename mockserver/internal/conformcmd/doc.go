// Package conformcmd is the command line of the contract runner (package
// internal/conformance): its flags, the run and the report. [Run] is the
// whole command; both contextsvc-conform (cmd/contextsvc-conform) and
// contextsvc conform (cmd/contextsvc) call it with the command line as it
// was given, so their flags, help, output and exit codes are the same.
package conformcmd
