// Package mockcmd is the command line of the mock server: its flags,
// start, serving and shutdown. [Run] is the whole command; both
// contextsvc-mock (mockserver/cmd/contextsvc-mock) and contextsvc mock
// (cmd/contextsvc) call it with the command line as it was given, so
// their flags, help, output and exit codes are the same.
package mockcmd
