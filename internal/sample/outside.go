package sample

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/proxybench/proxybench/verdict"
)

// outsideMeter measures the CPU the whole machine used over a run, and the upstream's when it
// is not the target itself, so that what is left is what nobody of the run used.
type outsideMeter struct {
	ok                 bool
	busy0, total0, up0 uint64
	upstreamPID        int
}

// machineTicks reads /proc/stat's aggregate "cpu" line: the clock ticks every CPU spent busy
// in processes or stolen by a hypervisor (user, nice, system, steal), and in all. Interrupt
// and softirq time is left out of busy: with IRQ time accounting the kernel charges the
// loopback traffic of the run itself there, to no process.
func machineTicks() (busy, total uint64, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseMachineTicks(data)
}

func parseMachineTicks(data []byte) (busy, total uint64, err error) {
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		if len(f) < 6 || string(f[0]) != "cpu" {
			continue
		}
		var notBusy uint64
		for i, v := range f[1:] {
			n, err := strconv.ParseUint(string(v), 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("/proc/stat: cpu line: field %d: %w", i+1, err)
			}
			// guest and guest_nice (fields 9, 10) are already counted in user and nice
			if i >= 8 {
				break
			}
			total += n
			if i >= 3 && i <= 6 { // idle, iowait, irq, softirq
				notBusy += n
			}
		}
		return total - notBusy, total, nil
	}
	return 0, 0, fmt.Errorf("/proc/stat: no aggregate cpu line")
}

// startOutside takes the baseline; upstreamPID is the upstream's pid (0 or the target's own:
// not counted apart).
func startOutside(upstreamPID int) outsideMeter {
	m := outsideMeter{upstreamPID: upstreamPID}
	busy, total, err := machineTicks()
	if err != nil {
		return m
	}
	m.busy0, m.total0, m.ok = busy, total, true
	if upstreamPID > 0 {
		if st, err := readStat(upstreamPID); err == nil {
			m.up0 = st.ticks
		} else {
			m.ok = false
		}
	}
	return m
}

// finish sets r's outside figures from what the machine used since the baseline, less the
// target's, the client's and the upstream's CPU (r's target and client figures must be set).
func (m outsideMeter) finish(r *Resources) {
	if !m.ok {
		return
	}
	busy, total, err := machineTicks()
	if err != nil || total <= m.total0 {
		return
	}
	var up float64
	if m.upstreamPID > 0 {
		st, err := readStat(m.upstreamPID)
		if err != nil {
			return
		}
		up = ticksToSeconds(st.ticks - m.up0)
	}
	r.MachineCPUSeconds = ticksToSeconds(busy - m.busy0)
	r.OtherCPUSeconds = max(0, r.MachineCPUSeconds-r.TargetCPUSeconds-r.ClientCPUSeconds-up)
	r.OtherCPUShare = r.OtherCPUSeconds / ticksToSeconds(total-m.total0)
	r.OutsideLoad = verdict.OutsideLoad(r.OtherCPUShare)
}
