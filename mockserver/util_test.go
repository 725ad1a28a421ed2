package mockserver

import (
	"net/http"
	"net/http/httptest"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustRequest(method, path string) *http.Request { return httptest.NewRequest(method, path, nil) }
