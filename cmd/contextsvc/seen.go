package main

import "sync"

// seenEvents remembers the event ids of the last limit deliveries listen
// verified, to mark a duplicate: a delivery of an event already taken
// (answered 2xx) or being handled now, which an app that deduplicates by
// event id, as the SDK's handler does, would skip. A retry of an event
// whose deliveries all failed is no duplicate: the app has yet to take it.
// The oldest id is forgotten first; an id is at most maxSeenID bytes (a
// longer one is not remembered).
type seenEvents struct {
	mu    sync.Mutex
	limit int
	ids   map[string]*seenEvent
	ring  []string // the ids in the order first seen; next is the oldest
	next  int
}

type seenEvent struct {
	inFlight int  // deliveries of it being handled
	taken    bool // a delivery of it was answered 2xx
}

const maxSeenID = 256

func newSeenEvents(limit int) *seenEvents {
	return &seenEvents{limit: limit, ids: make(map[string]*seenEvent)}
}

// begin records that a delivery of the event id is being handled and
// reports whether it is a duplicate; the delivery's answer is told to the
// entry returned (nil for an id not remembered) by end.
func (s *seenEvents) begin(id string) (duplicate bool, e *seenEvent) {
	if id == "" || len(id) > maxSeenID {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.ids[id]
	if !ok {
		e = &seenEvent{}
		if len(s.ring) < s.limit {
			s.ring = append(s.ring, id)
		} else {
			delete(s.ids, s.ring[s.next])
			s.ring[s.next] = id
			s.next = (s.next + 1) % s.limit
		}
		s.ids[id] = e
	}
	duplicate = e.taken || e.inFlight > 0
	e.inFlight++
	return duplicate, e
}

// end records that the delivery begin returned e for was answered: the
// event is taken when the answer was 2xx. An entry forgotten meanwhile is
// updated to no effect.
func (s *seenEvents) end(e *seenEvent, taken bool) {
	if e == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.inFlight > 0 {
		e.inFlight--
	}
	e.taken = e.taken || taken
}

// len is how many ids are remembered.
func (s *seenEvents) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}
