package quota

// admission is one admitted attempt: when, its units, the units admitted
// in all up to it, and whether its answer has been seen.
type admission struct {
	at, cost, upTo int64
	answered       bool
}

// admittedKept is how many admissions a key remembers to count the units
// still out after an attempt.
const admittedKept = 32

// record notes an admission of cost units at n. e.mu is held.
func (e *entry) record(n, cost int64) {
	if e.openerSent == 0 || e.openNext {
		e.openerSent, e.openerUnits, e.openNext = n, e.units, false
	}
	e.units += cost
	e.admitted[e.nAdm%admittedKept] = admission{at: n, cost: cost, upTo: e.units}
	e.nAdm++
}

// outSince marks answered the attempt admitted at sent (the earliest not
// yet answered, when several were admitted at that instant) and returns the
// units admitted after it whose answers have not been seen: they may still
// be on their way to the server, which then cannot have counted them. An
// attempt answered already was counted, whatever the order the server saw
// them in. It also returns the attempt's own units, 1 when it is not among
// the admissions kept, and the units admitted in all up to it (0 when not
// kept). It returns no units out when sent is 0 or older than the
// admissions kept. e.mu is held.
func (e *entry) outSince(sent int64) (out int64, a admission) {
	a.cost = 1
	if sent == 0 {
		return 0, a
	}
	for i := e.nAdm - 1; i >= max(e.nAdm-admittedKept, 0); i-- {
		adm := &e.admitted[i%admittedKept]
		if adm.at < sent {
			break
		}
		if adm.at == sent && !adm.answered {
			// The attempt itself, unless an earlier one of that instant
			// is still unanswered.
			if j := i - 1; j < max(e.nAdm-admittedKept, 0) || e.admitted[j%admittedKept].at != sent || e.admitted[j%admittedKept].answered {
				adm.answered = true
				return out, *adm
			}
		}
		if !adm.answered {
			out += adm.cost
		}
	}
	// Not among those kept: its units are taken as the mean admitted.
	return out, admission{cost: max((e.units+int64(e.nAdm)/2)/int64(max(e.nAdm, 1)), 1)}
}
