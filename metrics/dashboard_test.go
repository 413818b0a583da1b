package metrics_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The dashboard's panels and queries as Grafana stores them.
type dashboard struct {
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID          int    `json:"id"`
		Title       string `json:"title"`
		FieldConfig struct {
			Defaults struct {
				Unit string `json:"unit"`
			} `json:"defaults"`
			Overrides []struct {
				Properties []struct {
					ID string `json:"id"`
				} `json:"properties"`
			} `json:"overrides"`
		} `json:"fieldConfig"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// dim is a quantity's dimension: bytes^B · seconds^S. A bare number
// (scalar) takes the dimension of what it meets.
type dim struct {
	B, S   int
	scalar bool
}

func (d dim) String() string {
	if d.scalar {
		return "scalar"
	}
	return fmt.Sprintf("bytes^%d·s^%d", d.B, d.S)
}

// unitDims are the Grafana units the dashboard may use, by dimension.
var unitDims = map[string]dim{
	"ops": {S: -1}, "reqps": {S: -1},
	"s": {S: 1}, "ms": {S: 1},
	"bytes": {B: 1}, "decbytes": {B: 1},
	"short": {}, "none": {}, "percentunit": {},
}

// TestDashboardInstanceAndUnits: the dashboard has an instance variable,
// every metric every query selects filters on it, and each panel's series
// share one dimension, the one its unit says (a rate is per second, a
// quantile of a _seconds histogram seconds, a gauge of jobs a count).
func TestDashboardInstanceAndUnits(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("grafana", "zkpipe.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	hasVar := false
	for _, v := range d.Templating.List {
		if v.Name == "instance" && strings.Contains(fmt.Sprint(v.Query), "label_values(") {
			hasVar = true
		}
	}
	if !hasVar {
		t.Error("no instance template variable (label_values of a zkpipe metric)")
	}
	instance := regexp.MustCompile(`(^|[{,\s])instance\s*=~?\s*"\$\{?instance\}?"`)
	if len(d.Panels) < 10 {
		t.Fatalf("%d panels", len(d.Panels))
	}
	for _, p := range d.Panels {
		want, ok := unitDims[p.FieldConfig.Defaults.Unit]
		if !ok {
			t.Errorf("panel %d %q: unit %q is none this test knows", p.ID, p.Title, p.FieldConfig.Defaults.Unit)
			continue
		}
		for _, o := range p.FieldConfig.Overrides {
			for _, pr := range o.Properties {
				if pr.ID == "unit" {
					t.Errorf("panel %d %q: a series overrides the unit: one panel, one unit", p.ID, p.Title)
				}
			}
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %d %q: no queries", p.ID, p.Title)
		}
		for _, tg := range p.Targets {
			q, err := parsePromQL(tg.Expr)
			if err != nil {
				t.Errorf("panel %d: %s: %v", p.ID, tg.Expr, err)
				continue
			}
			if len(q.selectors) == 0 {
				t.Errorf("panel %d: %s selects no metric", p.ID, tg.Expr)
			}
			for _, s := range q.selectors {
				if !instance.MatchString(s.matchers) {
					t.Errorf("panel %d %q: %s{%s} does not filter on instance=~\"$instance\"", p.ID, p.Title, s.name, s.matchers)
				}
			}
			if !q.dim.scalar && q.dim != want {
				t.Errorf("panel %d %q (unit %s, %v): %s is %v", p.ID, p.Title, p.FieldConfig.Defaults.Unit, want, tg.Expr, q.dim)
			}
		}
	}
}

func TestPromQLDimensions(t *testing.T) {
	for expr, want := range map[string]dim{
		`sum(rate(a_total{x="y"}[5m]))`:                                     {S: -1},
		`histogram_quantile(0.9, sum by (le) (rate(b_seconds_bucket[5m])))`: {S: 1},
		`rate(c_seconds_sum[5m]) / rate(c_seconds_count[5m])`:               {S: 1},
		`rate(d_seconds_total[1m])`:                                         {},
		`e_bytes / 2`:                                                       {B: 1},
		`count by (v) (f_bytes)`:                                            {},
	} {
		q, err := parsePromQL(expr)
		if err != nil || q.dim != want {
			t.Errorf("%s: %v %v, want %v", expr, q.dim, err, want)
		}
	}
	for _, bad := range []string{`a_bytes + b_seconds`, `rate(x[5m]`, `frobnicate(x)`, `sum x`} {
		if _, err := parsePromQL(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

type selector struct{ name, matchers string }

type promQuery struct {
	dim       dim
	selectors []selector
}

// parsePromQL parses the part of PromQL the dashboard uses (selectors,
// ranges, rate-like functions, aggregations with by/without, quantiles,
// arithmetic) and says each selector and the result's dimension.
func parsePromQL(e string) (promQuery, error) {
	p := &pqParser{s: []rune(e)}
	d, err := p.expr()
	if err == nil && p.skip() < len(p.s) {
		err = fmt.Errorf("unexpected %q at %d", p.s[p.i], p.i)
	}
	return promQuery{d, p.sel}, err
}

type pqParser struct {
	s   []rune
	i   int
	sel []selector
}

func (p *pqParser) skip() int {
	for p.i < len(p.s) && unicode.IsSpace(p.s[p.i]) {
		p.i++
	}
	return p.i
}

func (p *pqParser) peek() rune {
	if p.skip() < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pqParser) expect(c rune) error {
	if p.peek() != c {
		return fmt.Errorf("want %q at %d", c, p.i)
	}
	p.i++
	return nil
}

func (p *pqParser) word() string {
	p.skip()
	j := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || p.s[p.i] == ':' || unicode.IsLetter(p.s[p.i]) || (p.i > j && unicode.IsDigit(p.s[p.i]))) {
		p.i++
	}
	return string(p.s[j:p.i])
}

// until returns the text up to the closing c, past it.
func (p *pqParser) until(c rune) (string, error) {
	j := p.i
	for p.i < len(p.s) && p.s[p.i] != c {
		p.i++
	}
	if p.i == len(p.s) {
		return "", fmt.Errorf("unclosed, want %q", c)
	}
	p.i++
	return string(p.s[j : p.i-1]), nil
}

func combine(a, b dim, op rune) (dim, error) {
	switch {
	case a.scalar && b.scalar:
		return dim{scalar: true}, nil
	case a.scalar:
		if op == '/' {
			return dim{B: -b.B, S: -b.S}, nil
		}
		return b, nil
	case b.scalar:
		return a, nil
	}
	switch op {
	case '*':
		return dim{B: a.B + b.B, S: a.S + b.S}, nil
	case '/':
		return dim{B: a.B - b.B, S: a.S - b.S}, nil
	}
	if a != b {
		return dim{}, fmt.Errorf("%v %c %v: different dimensions", a, op, b)
	}
	return a, nil
}

func (p *pqParser) expr() (dim, error) {
	d, err := p.term()
	for err == nil && (p.peek() == '+' || p.peek() == '-') {
		op := p.s[p.i]
		p.i++
		var r dim
		if r, err = p.term(); err == nil {
			d, err = combine(d, r, op)
		}
	}
	return d, err
}

func (p *pqParser) term() (dim, error) {
	d, err := p.unary()
	for err == nil && (p.peek() == '*' || p.peek() == '/') {
		op := p.s[p.i]
		p.i++
		var r dim
		if r, err = p.unary(); err == nil {
			d, err = combine(d, r, op)
		}
	}
	return d, err
}

var (
	pqAggregations = map[string]bool{"sum": true, "avg": true, "max": true, "min": true, "count": true}
	pqFunctions    = map[string]int{"rate": -1, "irate": -1, "increase": 0, "clamp_min": 0, "clamp_max": 0, "abs": 0, "histogram_quantile": 0}
)

func (p *pqParser) grouping() error {
	save := p.i
	if w := p.word(); w == "by" || w == "without" {
		if err := p.expect('('); err != nil {
			return err
		}
		_, err := p.until(')')
		return err
	}
	p.i = save
	return nil
}

func (p *pqParser) unary() (dim, error) {
	c := p.peek()
	switch {
	case c == '(':
		p.i++
		d, err := p.expr()
		if err == nil {
			err = p.expect(')')
		}
		return d, err
	case unicode.IsDigit(c) || c == '.':
		for p.i < len(p.s) && (unicode.IsDigit(p.s[p.i]) || p.s[p.i] == '.' || p.s[p.i] == 'e') {
			p.i++
		}
		return dim{scalar: true}, nil
	case c == '_' || unicode.IsLetter(c):
	default:
		return dim{}, fmt.Errorf("unexpected %q at %d", c, p.i)
	}
	w := p.word()
	if pqAggregations[w] {
		if err := p.grouping(); err != nil {
			return dim{}, err
		}
		if err := p.expect('('); err != nil {
			return dim{}, fmt.Errorf("%s: %w", w, err)
		}
		d, err := p.expr()
		if err == nil {
			err = p.expect(')')
		}
		if err == nil {
			err = p.grouping()
		}
		if w == "count" {
			d = dim{}
		}
		return d, err
	}
	if shift, ok := pqFunctions[w]; ok {
		if err := p.expect('('); err != nil {
			return dim{}, err
		}
		var args []dim
		from := len(p.sel)
		for {
			d, err := p.expr()
			if err != nil {
				return dim{}, err
			}
			args = append(args, d)
			if p.peek() != ',' {
				break
			}
			p.i++
		}
		if err := p.expect(')'); err != nil {
			return dim{}, err
		}
		d := args[0]
		if w == "histogram_quantile" {
			if len(args) != 2 {
				return dim{}, fmt.Errorf("histogram_quantile takes 2 arguments")
			}
			// a quantile is in the unit of the buckets' le, whatever
			// rate did to the bucket counts
			var buckets []string
			for _, s := range p.sel[from:] {
				if strings.HasSuffix(s.name, "_bucket") {
					buckets = append(buckets, s.name)
				}
			}
			if len(buckets) != 1 {
				return dim{}, fmt.Errorf("histogram_quantile over %v: want one _bucket series", buckets)
			}
			return metricDim(buckets[0]), nil
		}
		d.S += shift
		return d, nil
	}
	if p.peek() == '(' {
		return dim{}, fmt.Errorf("unknown function %s", w)
	}
	s := selector{name: w}
	if p.peek() == '{' {
		p.i++
		m, err := p.until('}')
		if err != nil {
			return dim{}, err
		}
		s.matchers = m
	}
	if p.peek() == '[' {
		p.i++
		if _, err := p.until(']'); err != nil {
			return dim{}, err
		}
	}
	p.sel = append(p.sel, s)
	return metricDim(w), nil
}

// metricDim is a metric's dimension by Prometheus's naming rules: the base
// unit is the name's suffix (before _total, and a histogram's _bucket or
// _sum), and a histogram's _count is a count.
func metricDim(name string) dim {
	if strings.HasSuffix(name, "_count") {
		return dim{}
	}
	for _, s := range []string{"_total", "_bucket", "_sum"} {
		name = strings.TrimSuffix(name, s)
	}
	switch {
	case strings.HasSuffix(name, "_bytes"):
		return dim{B: 1}
	case strings.HasSuffix(name, "_seconds"):
		return dim{S: 1}
	}
	return dim{}
}
