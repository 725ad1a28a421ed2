package mockserver

import (
	"sync"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
)

// eventSpec is the document as CheckEvent reads it, loaded on first use (a
// few hundred milliseconds) and never changed after.
var eventSpec = sync.OnceValues(func() (*contract.Spec, error) { return contract.LoadSpec(openAPIDocument) })

// CheckEvent holds an event, its JSON envelope as a delivery carries it
// ({"id","type","timestamp","data"}), to the contract: the OpenAPI
// document's schema of the envelope and of its type's data ([OpenAPI]). It
// returns each way the event breaks it, none when it keeps it; each
// mismatch's Where names the part ("event /data/name"). A program that
// makes events of its own (a test's fixtures, contextsvc trigger
// --override) checks them with it before it sends them. The error is the
// document's own, which the mock's tests keep from happening.
func CheckEvent(event []byte) ([]ContractMismatch, error) {
	spec, err := eventSpec()
	if err != nil {
		return nil, err
	}
	found := spec.CheckEvent(event)
	out := make([]ContractMismatch, len(found))
	for i, m := range found {
		out[i] = ContractMismatch(m)
	}
	return out, nil
}
