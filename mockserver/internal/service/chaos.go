package service

import "github.com/contextsvc/contextsvc-go/mockserver/internal/model"

// SetChaos puts the chaos mode c in force from now, its ordinals from 1
// (a mode already set is replaced), and returns it as it stands: its seed
// chosen when c gives none. Its error is a *model.ChaosError (matching
// model.ErrInvalidChaos) for settings that cannot be used, and for a
// validating proxy, which plays no service for chaos to play with; the
// mode is then left as it was.
func (s *Service) SetChaos(c model.Chaos) (model.ChaosReport, error) {
	if s.Proxy != nil {
		return model.ChaosReport{}, &model.ChaosError{Message: ProxyChaos}
	}
	return s.Chaos.Set(c, s.Now())
}

// ProxyChaos says why a validating proxy takes no chaos mode.
const ProxyChaos = "a validating proxy forwards every /v1 request to its upstream and makes no delivery: " +
	"chaos plays the in-memory service, so it goes without -upstream (mockserver.WithUpstream)"

// StopChaos turns the chaos mode off, and reports whether it was on.
func (s *Service) StopChaos() bool { return s.Chaos.Stop() }
