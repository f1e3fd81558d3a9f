package k8s

import "testing"

func TestK6MessageIsTheScripts(t *testing.T) {
	for _, tc := range []struct{ stderr, want string }{
		{
			`time="2026-11-24T07:25:18Z" level=error msg="Error: TARGET_URL http://a:1 is http:// and h2 is https://: give the target's TLS listener\n\tat origin (file:///x/targets.js:141:13(49))\n" hint="script exception" source=stacktrace`,
			"TARGET_URL http://a:1 is http:// and h2 is https://: give the target's TLS listener",
		},
		{`level=error msg="a \"quoted\" word"` + "\n" + `level=error msg="second"`, `a "quoted" word; second`},
		{"not logfmt at all\n", "not logfmt at all"},
	} {
		if got := k6Message(tc.stderr); got != tc.want {
			t.Errorf("k6Message(%q) = %q, want %q", tc.stderr, got, tc.want)
		}
	}
}
