package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/events"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
	"go.opentelemetry.io/otel/trace"
)

// Emit fires an event: it records an event of typ for account with data
// (any value that encodes to a JSON object, or a compact json.RawMessage)
// at the clock's now, tells the dashboards (of contextID too, when the
// event is about a context), and hands it to the delivery engine once for
// each of the account's active webhooks subscribed to typ, in a span of
// its own when the server is traced (the parent of its deliveries'
// attempts). With a chaos mode, the event takes the next ordinal, and its
// deliveries (by their place among its webhooks, in registration order)
// the chaos tickets their decisions are keyed on. ctx is the request's (or
// the Go call's): it bounds the wait for room when the delivery backlog is
// full. Call it without holding any lock.
func (s *Service) Emit(ctx context.Context, account string, typ contextsvc.EventType, contextID string, data any) model.Event {
	raw, ok := data.(json.RawMessage)
	if !ok {
		raw, _ = json.Marshal(data)
	}
	now := s.Now()
	id := ids.New("evt_")
	var span trace.Span
	if s.Tel != nil {
		ctx, span = s.Tel.StartEvent(ctx, id, typ, account)
	}
	ev := events.New(id, typ, now, account, raw)
	run := s.Chaos.Current()
	if run != nil {
		ev.ChaosOrdinal = run.NextEvent()
	}
	s.Events.Add(ev)
	s.Changes.Publish(changes.Change{Kind: changes.KindEvent, ID: ev.ID, Action: "created", Account: account, Type: string(typ),
		ContextID: contextID})
	targets := s.Store.Targets(account, typ)
	for i, w := range targets {
		var t chaos.Ticket
		if run != nil {
			t = run.Ticket(ev.ChaosOrdinal, i)
		}
		// The event's Body is never changed, so the deliveries share it
		// with the event log instead of copying it.
		s.Deliveries.Enqueue(ctx, ev.ID, ev.Type, ev.Body, w, t)
	}
	if span != nil {
		s.Tel.EndEvent(span, len(targets))
	}
	return ev
}

// ValidEventType checks an event type as EmitEvent does: its error wraps
// model.ErrInvalidEvent.
func ValidEventType(typ string) error {
	if err := rules.EventType(typ); err != nil {
		return fmt.Errorf("%w: %w", model.ErrInvalidEvent, err)
	}
	return nil
}

// EmitEvent fires an event of any type with the given data for an account
// ("" is the first key's), as mockserver.Server.EmitEvent documents: its
// error wraps model.ErrUnknownAccount for an account no key belongs to,
// and model.ErrInvalidEvent for a type or data it cannot send.
func (s *Service) EmitEvent(ctx context.Context, account string, typ contextsvc.EventType, data json.RawMessage) (model.Event, error) {
	if account == "" {
		account = s.Keys.Default().Account
	}
	if s.Store.Account(account) == nil {
		return model.Event{}, fmt.Errorf("%w: %q", model.ErrUnknownAccount, account)
	}
	if err := ValidEventType(string(typ)); err != nil {
		return model.Event{}, err
	}
	var buf bytes.Buffer
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Compact(&buf, trimmed) != nil {
		return model.Event{}, fmt.Errorf("%w: data must be a JSON object", model.ErrInvalidEvent)
	}
	return s.Emit(ctx, account, typ, "", json.RawMessage(buf.Bytes())), nil
}

// Publish fires context.published for the live context contextID of any
// account (the mock's stand-in for the dashboard action, which has no
// public endpoint), as published by the first user of its account. Its
// error wraps model.ErrContextNotFound when there is no such context.
func (s *Service) Publish(ctx context.Context, contextID string) (model.Event, error) {
	p, ok := s.Store.Publish(contextID)
	if !ok {
		return model.Event{}, fmt.Errorf("%w: %q", model.ErrContextNotFound, contextID)
	}
	d := contextsvc.ContextPublishedData{ContextID: contextID, Name: p.Name, Version: p.Version, PublishedBy: p.By}
	return s.Emit(ctx, p.Account, contextsvc.EventContextPublished, contextID, d), nil
}

// Resend makes a new delivery of the kept event eventID, signed and sent
// as its first deliveries were: to the webhook webhookID, or, when it is
// "", to every active webhook of the event's account that receives its
// type. The deliveries are new (ids of their own, attempts from 1), with
// no chaos decision; the event keeps its id, so a receiver that
// deduplicates sees it again as the same event. Its errors are the admin
// API's answers (*httpapi.Error): 404 for an event or webhook it does not
// have, 409 for a webhook of another account, inactive, or that does not
// receive the event's type, or for no webhook at all to send to.
func (s *Service) Resend(ctx context.Context, eventID, webhookID string) ([]model.Delivery, error) {
	ev, ok := s.Events.Get(eventID)
	if !ok {
		return nil, httpapi.NotFound("no kept event with id " + strconv.Quote(eventID))
	}
	conflict := func(msg string) error {
		return &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict, Message: msg}
	}
	var targets []*store.Webhook
	if webhookID == "" {
		if targets = s.Store.Targets(ev.Account, ev.Type); len(targets) == 0 {
			return nil, conflict(fmt.Sprintf("no active webhook of account %q receives %s: register one (or give webhookId)", ev.Account, ev.Type))
		}
	} else {
		w, ok := s.Store.Webhook(webhookID)
		switch {
		case !ok:
			return nil, rules.WebhookNotFound(webhookID)
		case w.Account() != ev.Account:
			return nil, conflict(fmt.Sprintf("the webhook %s is of account %q, the event of account %q: an event goes only to its account's webhooks", webhookID, w.Account(), ev.Account))
		case !w.State().Deliverable():
			return nil, conflict(fmt.Sprintf("the webhook %s is inactive: it takes deliveries again once reactivated (PATCH /_mock/webhooks/{id} {\"active\":true})", webhookID))
		case !slices.Contains(w.State().Events, ev.Type):
			return nil, conflict(fmt.Sprintf("the webhook %s does not receive %s", webhookID, ev.Type))
		}
		targets = []*store.Webhook{w}
	}
	out := make([]model.Delivery, 0, len(targets))
	for _, w := range targets {
		// Deactivated meanwhile: it takes nothing, as for a new event.
		if d, ok := s.Deliveries.Enqueue(ctx, ev.ID, ev.Type, ev.Body, w, chaos.Ticket{}); ok {
			out = append(out, d)
		}
	}
	return out, nil
}
