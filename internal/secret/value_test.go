package secret

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestValueNeverPrints(t *testing.T) {
	v := New("hunter2")
	type rec struct {
		DSN Value `json:"dsn"`
	}
	b, err := json.Marshal(rec{v})
	if err != nil {
		t.Fatal(err)
	}
	outs := []string{v.String(), v.GoString(), fmt.Sprint(v), fmt.Sprintf("%s|%v|%+v|%#v|%q|%x|%d|%10s", v, v, v, v, v, v, v, v),
		fmt.Sprintf("%v %+v %#v", rec{v}, rec{v}, rec{v}), string(b)}
	if tb, _ := v.MarshalText(); true {
		outs = append(outs, string(tb))
	}
	for _, o := range outs {
		if strings.Contains(o, "hunter2") {
			t.Errorf("the secret shows: %s", o)
		}
		if !strings.Contains(o, Placeholder) {
			t.Errorf("no placeholder in %s", o)
		}
	}
	if v.Reveal() != "hunter2" || v.IsZero() || !New("").IsZero() || New("").String() != "" {
		t.Errorf("Reveal/IsZero wrong")
	}
	if string(b) != `{"dsn":"[redacted]"}` {
		t.Errorf("JSON %s", b)
	}
}
