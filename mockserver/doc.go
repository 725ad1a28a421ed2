// Package mockserver is an in-memory reference implementation of the
// Context Management Service's /v1 API, for tests and local development.
package mockserver
