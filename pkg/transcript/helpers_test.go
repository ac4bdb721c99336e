package transcript_test

import (
	"testing"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

func TestPriceTable(t *testing.T) {
	fixed := pricing.New(map[string]pricing.Price{"fixed-model": {}})
	followed := pricing.New(map[string]pricing.Price{"followed-model": {}})
	current := func() *pricing.Table { return followed }
	none := func() *pricing.Table { return nil }
	cases := []struct {
		name    string
		fixed   *pricing.Table
		current func() *pricing.Table
		want    *pricing.Table
	}{
		{"Neither", nil, nil, pricing.Default()},
		{"Fixed", fixed, nil, fixed},
		{"CurrentOverFixed", fixed, current, followed},
		{"CurrentAlone", nil, current, followed},
		{"CurrentNilFallsBackToFixed", fixed, none, fixed},
		{"CurrentNilFallsBackToDefault", nil, none, pricing.Default()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := transcript.PriceTable(c.fixed, c.current); got != c.want {
				t.Errorf("PriceTable = %p, want %p", got, c.want)
			}
		})
	}
}
