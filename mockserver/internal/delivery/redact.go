package delivery

import (
	"errors"
	"net/url"
	"strings"

	"github.com/contextsvc/contextsvc-go/redact"
)

// A receiver's url may carry a secret, a password in its userinfo or a
// token in its query (Slack-style ?token=…). Logs, attempt errors
// (Attempt.Error) and every error text show it through
// redact.URL, userinfo and query values masked; only the admin API's
// webhook and delivery answers, and the state document, hold it whole,
// as registered.

// attemptError is the text of err, an attempt's failure to get an answer
// from the receiver at rawURL, with that url redacted. net/http's errors
// are *url.Error, whose text holds the whole url: `Post "https://…?
// token=…": dial tcp …: connection refused`.
func attemptError(err error, rawURL string) string {
	msg := err.Error()
	var ue *url.Error
	if !errors.As(err, &ue) {
		return msg
	}
	masked := *ue
	masked.URL = redact.URL(rawURL)
	return strings.ReplaceAll(msg, ue.Error(), masked.Error())
}
