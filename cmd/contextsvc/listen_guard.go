package main

import (
	"context"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// What listen's receiver lets through, and where it refuses to forward.

// deliveryHeaders are the headers a delivery carries, the only ones
// forwarded to the app by default: its type, the sender's name, the
// signature and the delivery's names (the contract's), and the trace
// context the service sends.
var deliveryHeaders = []string{
	"Content-Type", "User-Agent",
	contextsvc.DefaultSignatureHeader, "X-Service-Event", "X-Service-Delivery", "X-Service-Delivery-Attempt",
	"Traceparent", "Tracestate",
}

// credentialHeaders are never forwarded, --forward-unverified or not: a
// request from elsewhere must not reach the app as the user.
var credentialHeaders = []string{"Authorization", "Cookie", "Proxy-Authorization"}

// hopHeaders are the headers of one connection, never forwarded (RFC
// 9110 section 7.6.1), with Host and Content-Length, which the forwarded
// request and answer set for themselves.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "Content-Length"}

// viaHeader lists the listen receivers a request went through, so that one
// that comes round again (through a proxy, a name that resolves back, a
// second listen forwarding to the first) is refused rather than forwarded
// without end.
const viaHeader = "Contextsvc-Listen-Via"

// maxVia bounds the receivers a request may have gone through.
const maxVia = 8

// forwardHeaders are the headers of the request forwarded to the app:
// the delivery's own, or with all every end-to-end header but the
// credentials; and the via list with this receiver added.
func forwardHeaders(src http.Header, all bool, self string) http.Header {
	dst := http.Header{}
	if all {
		for k, vs := range src {
			dst[k] = append([]string(nil), vs...)
		}
		for _, f := range src.Values("Connection") {
			for _, name := range strings.Split(f, ",") {
				dst.Del(strings.TrimSpace(name))
			}
		}
		for _, h := range hopHeaders {
			dst.Del(h)
		}
		for _, h := range credentialHeaders {
			dst.Del(h)
		}
	} else {
		for _, h := range deliveryHeaders {
			if vs := src.Values(h); len(vs) > 0 {
				dst[h] = append([]string(nil), vs...)
			}
		}
	}
	dst.Del(viaHeader)
	dst.Set(viaHeader, strings.Join(append(viaList(src), self), ", "))
	return dst
}

// answerHeaders are the app's answer's headers passed back to the
// sender: what the answer is, and when to retry.
var answerHeaders = []string{"Content-Type", "Retry-After"}

// viaList is the via header's receivers.
func viaList(h http.Header) []string {
	var out []string
	for _, v := range h.Values(viaHeader) {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" {
				out = append(out, id)
			}
		}
	}
	return out
}

// cameRound reports whether a request went through this receiver already,
// or through more receivers than any setup needs.
func cameRound(h http.Header, self string) bool {
	via := viaList(h)
	if len(via) >= maxVia {
		return true
	}
	for _, id := range via {
		if id == self {
			return true
		}
	}
	return false
}

// crossOrigin refuses a browser's request from a page of another origin,
// as the mock's admin routes do (Sec-Fetch-Site, else Origin against
// Host): the service never sends one, and a page the user visits could
// otherwise post, through the user's browser, to the receiver.
var crossOrigin = http.NewCrossOriginProtection()

// jsonBody reports whether a Content-Type is JSON's, as every delivery's
// is. A form or text/plain is what a page of another site may post
// without asking the browser first.
func jsonBody(ctype string) bool {
	mt, _, err := mime.ParseMediaType(ctype)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// forwardsToItself reports whether target, a forwarding URL, names the
// receiver listening at addr: the same port, and a host that resolves to
// the receiver's address, or to any address of this machine when the
// receiver listens on all of them (0.0.0.0, [::]), or to 0.0.0.0 or [::],
// which a connection takes as this machine. resolve looks names up; local
// lists this machine's addresses.
func forwardsToItself(ctx context.Context, target *url.URL, addr net.Addr,
	resolve func(ctx context.Context, network, host string) ([]netip.Addr, error), local func() []netip.Addr,
) bool {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return false
	}
	port := target.Port()
	if port == "" {
		port = "80"
		if target.Scheme == "https" {
			port = "443"
		}
	}
	if p, err := strconv.Atoi(port); err != nil || p != tcp.Port {
		return false
	}
	lip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return false
	}
	lip = lip.Unmap()
	var ips []netip.Addr
	host := target.Hostname()
	switch ip, err := netip.ParseAddr(host); {
	case err == nil:
		ips = []netip.Addr{ip}
	case strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost"):
		ips = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	default:
		ips, _ = resolve(ctx, "ip", host) // a name that does not resolve reaches nothing
	}
	for _, ip := range ips {
		ip = ip.Unmap()
		switch {
		case ip == lip, ip.IsUnspecified():
			return true
		case lip.IsUnspecified() && (ip.IsLoopback() || isLocal(ip, local)):
			return true
		}
	}
	return false
}

func isLocal(ip netip.Addr, local func() []netip.Addr) bool {
	for _, a := range local() {
		if a.Unmap() == ip {
			return true
		}
	}
	return false
}

// localAddrs lists this machine's interface addresses.
func localAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out
}
