package mockserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// BenchmarkProxy: GET /v1/contexts/{id} over loopback, straight to the
// mock (direct), through a plain httputil.ReverseProxy (reverse-proxy, the
// baseline of a proxy's cost), and through the validating proxy
// (validating: the same forwarding, the bodies recorded, the request and
// the answer held to the document).
func BenchmarkProxy(b *testing.B) {
	const key = "sk_bench_proxy"
	up := unvalidated(New(WithKey(Key{Token: key, Plan: PlanEnterprise, PerMinute: 1 << 30, Burst: 1 << 30})))
	upHS := httptest.NewServer(up)
	b.Cleanup(upHS.Close)
	target, _ := url.Parse(upHS.URL)
	plain := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target); pr.Out.Host = "" }})
	b.Cleanup(plain.Close)
	px := unvalidated(New(WithUpstream(upHS.URL + "/v1")))
	pxHS := httptest.NewServer(px)
	b.Cleanup(pxHS.Close)

	req, _ := http.NewRequest(http.MethodPost, upHS.URL+"/v1/contexts", strings.NewReader(`{"name":"Bench","content":"# Runbook\n\nSteps.","tags":["ops"]}`))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	var c struct{ ID string }
	_ = json.NewDecoder(resp.Body).Decode(&c)
	resp.Body.Close()

	for _, bc := range []struct{ name, base string }{
		{"direct", upHS.URL}, {"reverse-proxy", plain.URL}, {"validating", pxHS.URL},
	} {
		b.Run(bc.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			get, _ := http.NewRequest(http.MethodGet, bc.base+"/v1/contexts/"+c.ID, nil)
			get.Header.Set("Authorization", "Bearer "+key)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := client.Do(get)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatal(resp.Status)
				}
			}
		})
	}
	if n := len(px.ContractFindings()); n != 0 {
		b.Fatalf("%d findings: %+v", n, px.ContractFindings()[0])
	}
}
