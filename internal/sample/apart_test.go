package sample

import "testing"

// Apart takes the target's and the stack host's figures from the stack host's sampler, the
// client's from the load host's, and keeps the load host's outside load beside; Outside is the
// worse of the two hosts.
func TestApart(t *testing.T) {
	t.Parallel()
	stackHost := Resources{
		TargetCPUSeconds: 3, TargetLoadCPUSeconds: 2.5, RSSPeakMB: 40, TargetProcs: 3, Samples: 50,
		MachineCPUSeconds: 5, OtherCPUSeconds: 0.2, OtherCPUShare: 0.01,
	}
	tests := []struct {
		name  string
		load  Resources
		share float64
		over  bool
	}{
		{"a quiet load host", Resources{
			TargetCPUSeconds: 0.1, ClientCPUSeconds: 4, ClientLoadCPUSeconds: 3, ClientLoadSeconds: 9, ClientCPUs: 2, ClientCPUUtil: 0.8, ClientBound: false,
			MachineCPUSeconds: 4.5, OtherCPUSeconds: 0.05, OtherCPUShare: 0.002,
		}, 0.01, false},
		{"a busy load host", Resources{
			ClientCPUSeconds: 4, ClientCPUs: 2, ClientCPUUtil: 0.95, ClientCPUShare: 0.9, ClientBound: true,
			MachineCPUSeconds: 9, OtherCPUSeconds: 4, OtherCPUShare: 0.2, OutsideLoad: true,
		}, 0.2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Apart(stackHost, tt.load)
			if r.TargetCPUSeconds != 3 || r.RSSPeakMB != 40 || r.TargetProcs != 3 || r.Samples != 50 || r.MachineCPUSeconds != 5 {
				t.Errorf("target and stack host figures %+v: want the stack host's", r)
			}
			if r.ClientCPUSeconds != tt.load.ClientCPUSeconds || r.ClientCPUs != tt.load.ClientCPUs || r.ClientCPUUtil != tt.load.ClientCPUUtil || r.ClientBound != tt.load.ClientBound {
				t.Errorf("client figures %+v: want the load host's %+v", r, tt.load)
			}
			if r.ClientLoadCPUSeconds != 0 || r.TargetLoadCPUSeconds != 0 || r.ClientOverTarget() != tt.load.ClientCPUSeconds/3 {
				t.Errorf("load-phase figures %v, %v, ratio %v: want none, the ratio of the whole figures", r.ClientLoadCPUSeconds, r.TargetLoadCPUSeconds, r.ClientOverTarget())
			}
			if r.LoadHost == nil || r.LoadHost.OtherCPUShare != tt.load.OtherCPUShare || r.LoadHost.OutsideLoad != tt.load.OutsideLoad {
				t.Errorf("load host's outside load %+v: want %+v's", r.LoadHost, tt.load)
			}
			share, over, ok := r.Outside()
			if !ok || share != tt.share || over != tt.over {
				t.Errorf("Outside = %v, %v, %v; want %v, %v", share, over, ok, tt.share, tt.over)
			}
		})
	}
	if _, _, ok := (&Resources{}).Outside(); ok {
		t.Error("Outside of a run whose machine was not read: ok")
	}
}
