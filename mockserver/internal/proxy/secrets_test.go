package proxy

import (
	"net/http"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// TestMaskTarget: the values of the query's secret parameters are masked,
// names percent-decoded; nothing else of the target changes, however short
// a secret is.
func TestMaskTarget(t *testing.T) {
	t.Parallel()
	tests := []struct{ path, query, want string }{
		{"/v1/contexts", "", "/v1/contexts"},
		{"/v1/contexts", "limit=3&api_key=QUERYKEYSECRET99", "/v1/contexts?limit=3&api_key=xxxxx"},
		{"/v1/contexts", "limit=3&%61pi_%4Bey=e", "/v1/contexts?limit=3&%61pi_%4Bey=xxxxx"},
		{"/v1/contexts", "tag=e&sig=e&cursor=e", "/v1/contexts?tag=e&sig=xxxxx&cursor=e"},
		{"/v1/contexts/ctx_e", "access_token=e&Signature=a%2Bb&X-Amz-Credential=c", "/v1/contexts/ctx_e?access_token=xxxxx&Signature=xxxxx&X-Amz-Credential=xxxxx"},
	}
	for _, tt := range tests {
		if got := maskTarget(tt.path, tt.query); got != tt.want {
			t.Errorf("maskTarget(%q, %q) = %q, want %q", tt.path, tt.query, got, tt.want)
		}
	}
}

// TestMaskMismatch: a mismatch about a secret (by the schema the document
// gives it, its field's name, its parameter's name) keeps its message
// only when the rule broken is one whose messages never show the value;
// every message loses the dump of the schema and the value; a mismatch
// about anything else is kept as it is.
func TestMaskMismatch(t *testing.T) {
	t.Parallel()
	dump := "Error at \"/secret\": Doesn't match schema \"not\"\nSchema:\n  {\"not\":{}}\n\nValue:\n  \"whsec_\\u0001abc\"\n"
	tests := []struct {
		name string
		in   contract.Mismatch
		want string
	}{
		{"a secret's length", contract.Mismatch{Where: "body /secret", Rule: "#/components/schemas/WebhookSecret/maxLength", Message: "maximum string length is 256"},
			"maximum string length is 256"},
		{"a secret's type", contract.Mismatch{Where: "body /secret", Rule: "#/components/schemas/WebhookSecret/type", Message: "value must be a string"},
			"value must be a string"},
		{"a secret's not, its dump cut", contract.Mismatch{Where: "body /secret", Rule: "#/components/schemas/WebhookSecret/not", Message: dump},
			"Error at \"/secret\": Doesn't match schema \"not\""},
		{"a receiver url's pattern", contract.Mismatch{Where: "body /url", Rule: "#/components/schemas/WebhookURL/pattern", Message: `string doesn't match the regular expression "^x$"`},
			`string doesn't match the regular expression "^x$"`},
		{"a url's format, which may quote it", contract.Mismatch{Where: "body /data/0/url", Rule: "#/components/schemas/Webhook/properties/url/format", Message: `string doesn't match the format "uri" (parse "https://u:p@h": bad)`},
			withheld},
		{"a secret field off the document", contract.Mismatch{Where: "body /Secret", Rule: "#/x", Message: "whatever e"},
			withheld},
		{"a secret parameter that does not parse", contract.Mismatch{Where: "query api_key", Rule: "#/components/parameters/Key", Message: "value e: an invalid integer"},
			withheld},
		{"a plain parameter that does not parse", contract.Mismatch{Where: "query limit", Rule: "#/components/parameters/Limit", Message: "value e: an invalid integer"},
			"value e: an invalid integer"},
		{"the Authorization header", contract.Mismatch{Where: "header Authorization", Rule: "#/components/parameters/Auth", Message: "value Bearer e"},
			withheld},
		{"anything else", contract.Mismatch{Where: "body /name", Rule: "#/components/schemas/Context/properties/name/maxLength", Message: "Client value e must be a boolean"},
			"Client value e must be a boolean"},
		{"a whole body's dump", contract.Mismatch{Where: "body", Rule: "#/components/schemas/WebhookRequest", Message: "Doesn't match schema \"oneOf\"\nSchema:\n {}\nValue:\n {\"secret\":\"e\"}"},
			`Doesn't match schema "oneOf"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := maskMismatch(tt.in)
			if got.Message != tt.want || got.Where != tt.in.Where || got.Rule != tt.in.Rule {
				t.Errorf("maskMismatch(%+v) = %+v, want the message %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestMaskQuoted: a quoted value that is one of the exchange's secrets,
// whole, is masked; nothing else is, so a one-letter key or a receiver
// URL's user "u" leaves every word as it was.
func TestMaskQuoted(t *testing.T) {
	t.Parallel()
	body := `{"url":"https://u:pa%20ss@hooks.example.com/in?token=t%2Fok&x=1","secret":"whsec_abc","data":[{"secret":"deep"}]}`
	s := exchangeSecrets(http.Header{"Authorization": {"Bearer e"}}, "limit=3&api_key=k%2B1", []byte(body), []byte(`not json`))
	tests := []struct{ in, want string }{
		{`Contexts.Get returns a *contextsvc.Error: StatusCode 401, Type "unauthorized", Param "Bearer e", RequestID "e"`,
			`Contexts.Get returns a *contextsvc.Error: StatusCode 401, Type "unauthorized", Param "xxxxx", RequestID "xxxxx"`},
		{`Webhooks.Create returns webhook "whsec_abc", 1 events, Active true`, `Webhooks.Create returns webhook "xxxxx", 1 events, Active true`},
		{`returns webhook "deep"`, `returns webhook "xxxxx"`},
		{`user "u", password "pa ss", escaped "pa%20ss", token "t/ok" and "t%2Fok", key "k+1"`,
			`user "xxxxx", password "xxxxx", escaped "xxxxx", token "xxxxx" and "xxxxx", key "xxxxx"`},
		{`the url "https://u:pa%20ss@hooks.example.com/in?token=t%2Fok&x=1"`, `the url "xxxxx"`},
		{`Client value "Contexts" must be a boolean; unquoted e and u stay`, `Client value "Contexts" must be a boolean; unquoted e and u stay`},
		{`a quote " left open "e`, `a quote " left open "e`},
		{`nothing quoted`, `nothing quoted`},
	}
	for _, tt := range tests {
		if got := s.maskQuoted(tt.in); got != tt.want {
			t.Errorf("maskQuoted(%q)\n = %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
