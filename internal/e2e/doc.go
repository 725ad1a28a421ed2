// Package e2e holds the end-to-end tests of contextsvc-go: the client
// (package contextsvc) against the mock server (package mockserver), and the
// mock server's webhook deliveries against the SDK's verifying handler
// (contextsvc.NewWebhookHandler). They prove the three parts fit together;
// each part's own tests live beside it.
//
// The package has no exported API: everything is in its _test.go files.
package e2e
