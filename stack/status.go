package stack

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// TargetStatus is one row of `make status`.
type TargetStatus struct {
	Name    string
	Version string
	SHA256  string             // the program's (Running.SHA256), "" when not installed
	PID     int                // 0 when not running
	Health  map[Protocol]error // per protocol the target serves, only when running
	Problem string             // why the target cannot run, if it cannot
	// TLSProfile is the profile the stack was started with; TLS what each TLS protocol
	// negotiated now (a mismatch with the profile is that protocol's Health error).
	TLSProfile string
	TLS        map[Protocol]*Negotiated
	// Streams is how many concurrent streams a connection of h2 and h3 offers now
	// (Prober.OfferedStreams); StreamsErr why one could not be read: a warning, not ill health.
	Streams    map[Protocol]int
	StreamsErr map[Protocol]error
}

// Status reports every target of the targets file: installed version, pid and health.
func (s *Stack) Status(ctx context.Context) ([]TargetStatus, error) {
	st, err := s.LoadState()
	if err != nil {
		return nil, err
	}
	certs := CertsIn(filepath.Join(s.RunDir, "certs"))
	prober, proberErr := NewProber(s.Config.Hostname, st.Listen, certs.CAFile)
	var rows []TargetStatus
	for _, n := range s.Config.Names() {
		row := TargetStatus{Name: n}
		switch {
		case st.IsUp(n):
			// what runs, as recorded when it started: a build installed since, or a compose
			// container's binary, is not what answers (and asking GoDoxy starts a process)
			r := st.Targets[n]
			row.Version, row.SHA256 = r.Version, r.SHA256
		case n == Direct:
			row.Version = upstreamVersion(s.UpstreamBin())
			row.SHA256, _ = FileSHA256(s.UpstreamBin())
		default:
			d, err := LoadDefinition(s.ProxiesDir(), n)
			switch {
			case err != nil:
				row.Problem = err.Error()
			case !installed(d, s.CacheBin()):
				row.Problem = d.NotInstalled()
				if why := s.installFailure(n); why != "" && !d.Optional {
					row.Problem = LabelInstallFail + ": " + why
				}
			default:
				row.Version = s.Version(d, s.vars(n, certs, filepath.Join(s.RunDir, n), d))
				row.SHA256, _ = d.BinarySHA256(s.CacheBin())
			}
			if why := st.Missing[n]; why != "" && Failed(why) {
				row.Problem = why // what the last `make up` met
			}
		}
		if st.IsUp(n) {
			r := st.Targets[n]
			row.PID = r.PID
			row.Health = map[Protocol]error{}
			row.TLS = map[Protocol]*Negotiated{}
			row.TLSProfile = st.TLSProfile
			for _, proto := range r.Protocols {
				port := proto.Port(r.Ports)
				if proberErr != nil {
					row.Health[proto] = proberErr
					continue
				}
				if st.TLS == nil || proto == H1C {
					// no TLS, or no profile recorded (a stack compose started): a verified
					// request only
					pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
					row.Health[proto] = prober.Probe(pctx, proto, port)
					cancel()
					continue
				}
				pctx, cancel := context.WithTimeout(ctx, tlsTimeout)
				got, err := prober.CheckTLS(pctx, proto, port, st.TLSProfile, *st.TLS, r.TLSDifferences[proto])
				cancel()
				row.Health[proto] = err
				if got != nil {
					row.TLS[proto] = got
				}
			}
			if proberErr == nil {
				row.Streams, row.StreamsErr = offeredStreams(ctx, prober, r.Protocols, r.Ports, row.Health)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// offeredStreams reads what each of h2 and h3 among protos offers; one whose probe failed is
// not asked again: its Health says why.
func offeredStreams(ctx context.Context, prober *Prober, protos []Protocol, ports Ports, health map[Protocol]error) (map[Protocol]int, map[Protocol]error) {
	got, errs := map[Protocol]int{}, map[Protocol]error{}
	for _, proto := range streamsProtocols {
		if !slices.Contains(protos, proto) || health[proto] != nil {
			continue
		}
		n, err := prober.OfferedStreams(ctx, proto, proto.Port(ports))
		if err != nil {
			errs[proto] = err
			continue
		}
		got[proto] = n
	}
	return got, errs
}

// streamsColumn is the status table's STREAMS/CONN: "h2 128, h3 100" ("-": none read, "?": a
// protocol whose value could not be read).
func streamsColumn(r TargetStatus) string {
	var parts []string
	for _, p := range streamsProtocols {
		if n, ok := r.Streams[p]; ok {
			parts = append(parts, string(p)+" "+StreamsWord(n))
		} else if r.StreamsErr[p] != nil {
			parts = append(parts, string(p)+" ?")
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// PrintStatus writes the rows as a table, with each failing probe's error below it.
func PrintStatus(w io.Writer, rows []TargetStatus) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tVERSION\tSHA256\tPID\tHEALTH\tSTREAMS/CONN\tTLS")
	var notes []string
	for _, r := range rows {
		pid, health := "-", "down"
		if r.PID != 0 {
			pid = fmt.Sprint(r.PID)
			var parts []string
			for _, p := range Protocols {
				err, ok := r.Health[p]
				switch {
				case !ok:
					// Said, not left out: a target without h3 must not read as one
					// whose h3 was forgotten.
					parts = append(parts, "no "+string(p))
				case err == nil:
					parts = append(parts, string(p)+" ok")
				default:
					parts = append(parts, string(p)+" FAIL")
					notes = append(notes, fmt.Sprintf("%s %s: %v", r.Name, p, err))
				}
			}
			health = strings.Join(parts, ", ")
			for _, p := range streamsProtocols {
				if err := r.StreamsErr[p]; err != nil {
					notes = append(notes, fmt.Sprintf("%s %s: warning: streams per connection not read: %v", r.Name, p, err))
				}
			}
		}
		version := r.Version
		if r.Problem != "" {
			version = "-"
			if l := Label(r.Problem); l != "" && r.PID == 0 {
				health = l
			}
			notes = append(notes, fmt.Sprintf("%s: %s", r.Name, r.Problem))
		}
		tlsDesc := "-"
		if d := strings.TrimSpace(tlsSummary(r.TLS)); d != "" {
			tlsDesc = r.TLSProfile + ": " + d
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, version, short(r.SHA256), pid, health, streamsColumn(r), tlsDesc)
	}
	tw.Flush()
	for _, n := range notes {
		fmt.Fprintln(w, "  "+n)
	}
}

// short is a sha256's first 12 hex digits, enough to tell builds apart in a table ("-": none).
func short(sum string) string {
	if sum == "" {
		return "-"
	}
	return sum[:min(12, len(sum))]
}

func installed(d *Definition, cacheBin string) bool {
	_, err := d.Binary(cacheBin)
	return err == nil
}
