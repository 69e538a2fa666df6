package engine

import (
	"context"
	"fmt"

	"github.com/weftlang/weft/flow"
)

// subflow returns the action of a WORKFLOW node: it runs the subworkflow's
// plan with the node's inputs as parameters and returns the outputs of the
// final node it ends at, by name. Its events reach the parent's observer
// with node names prefixed by the parent node ("outer/inner").
func (st *runState) subflow(pn *flow.PlanNode) Action {
	return ActionFunc(func(ctx context.Context, c *Call) error {
		if pn.Sub == nil {
			return fmt.Errorf("node %s: subworkflow was not compiled", pn.Name)
		}
		params := make(map[string]flow.Value, len(c.Inputs))
		for i, in := range pn.Inputs {
			params[in.Name] = c.Inputs[i]
		}
		var obs Observer
		if st.obs != nil {
			obs = ObserverFunc(func(e Event) {
				if e.Node != "" {
					e.Node = pn.Name + "/" + e.Node
				}
				if e.From != "" {
					e.From = pn.Name + "/" + e.From
				}
				for i := range e.To {
					e.To[i] = pn.Name + "/" + e.To[i]
				}
				e.Seq = 0
				switch e.Type {
				case RunStarted, RunFinished, RunFailed, RunCancelled:
					return // the parent reports the node's own start and end
				}
				st.observe(e)
			})
		}
		res, err := st.r.Run(ctx, pn.Sub, params, obs)
		if err != nil {
			return fmt.Errorf("subworkflow %s: %w", pn.Sub.Workflow.Name, err)
		}
		for _, n := range res.Notices {
			n.Node, n.Step, n.Item = pn.Name+"/"+n.Node, c.Step, c.Item
			c.notices = append(c.notices, n) // its event came through obs
		}
		if res.Status == Waiting {
			return fmt.Errorf("subworkflow %s waits for a person at %s; human nodes inside subworkflows are not supported yet", pn.Sub.Workflow.Name, res.Waiting[0].Node)
		}
		for i, o := range pn.Outputs {
			v := res.Output(o.Name)
			if v.IsNull() {
				return &OutputError{Node: pn.Name, Field: o.Name, Err: fmt.Errorf("subworkflow %s ended at %s, which has no output %s", pn.Sub.Workflow.Name, res.Final, o.Name)}
			}
			c.Outputs[i] = v
		}
		return nil
	})
}
