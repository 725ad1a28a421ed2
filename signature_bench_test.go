package contextsvc

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
)

// benchSizes are the payload sizes the issue asks for: a typical event and
// the handler's default body limit.
var benchSizes = []struct {
	name string
	n    int
}{{"1KiB", 1 << 10}, {"1MiB", 1 << 20}}

func benchPayload(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte('a' + i%26)
	}
	return p
}

var benchSink [sha256.Size]byte

// BenchmarkSHA256 is the baseline: one plain SHA-256 of the payload, the
// least work any verifier must do.
func BenchmarkSHA256(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			p := benchPayload(sz.n)
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				benchSink = sha256.Sum256(p)
			}
		})
	}
}

// usualVerify is the verifier most receivers write: a fresh HMAC per call,
// hex-encode and compare.
func usualVerify(payload []byte, header, secret string) bool {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(payload)
	want := SignaturePrefix + hex.EncodeToString(m.Sum(nil))
	return hmac.Equal([]byte(want), []byte(header))
}

// BenchmarkUsualVerifier is the second baseline.
func BenchmarkUsualVerifier(b *testing.B) {
	const secret = "whsec_benchmark_secret_0123456789"
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			p := benchPayload(sz.n)
			h := Sign(p, secret)
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				if !usualVerify(p, h, secret) {
					b.Fatal("verification failed")
				}
			}
		})
	}
}

// BenchmarkVerifySignature measures VerifySignature once warm.
func BenchmarkVerifySignature(b *testing.B) {
	const secret = "whsec_benchmark_secret_0123456789"
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			p := benchPayload(sz.n)
			h := Sign(p, secret)
			b.SetBytes(int64(len(p)))
			b.ReportAllocs()
			for b.Loop() {
				if err := VerifySignature(p, h, secret); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifySignatureParallel checks that the pooled keyed state
// scales across goroutines without allocating.
func BenchmarkVerifySignatureParallel(b *testing.B) {
	const secret = "whsec_benchmark_secret_0123456789"
	p := benchPayload(1 << 10)
	h := Sign(p, secret)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := VerifySignature(p, h, secret); err != nil {
				panic(fmt.Sprint(err))
			}
		}
	})
}
