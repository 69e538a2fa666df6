package adaptiverag

import (
	"regexp"
	"strings"
)

// OODPattern is one rule of the fast out-of-domain layer: a question
// Pattern matches is OutOfDomain at once, with no LLM call, unless it
// holds one of the domain terms (Deps.DomainTerms).
type OODPattern struct {
	// Name names the rule; State.ClassifiedBy is "pattern:" + Name.
	Name string
	// Pattern is matched against the question.
	Pattern *regexp.Regexp
	// Reply is generate_ood_response's answer; "{domain}" is replaced by
	// Deps.Domain. "" means the generic refusal.
	Reply string
}

// defaultPatternSpecs returns the default rules as (name, expression,
// reply); DefaultOODPatterns compiles each expression case-insensitive.
func defaultPatternSpecs() [][3]string {
	return [][3]string{
		// A message that is only a greeting, thanks or goodbye.
		{"greeting",
			`^\W*(hi|hello|hey|hiya|yo|greetings|good (morning|afternoon|evening|day)|thanks|thank you|thx|cheers|bye|goodbye|see you|how are you( doing)?|what'?s up)\b[\s\p{P}]*(there|everyone|all|so much|a lot|again|today|bot)?[\s\p{P}]*$`,
			"Hello! I answer questions about {domain}. What would you like to know?"},
		// Weather and forecasts.
		{"weather",
			`\b(weather|forecast|temperature (outside|today|tomorrow)|(will|is) it (going to )?(rain|snow)|raining|snowing|sunny|humidity)\b`,
			""},
		// Sports, teams and results.
		{"sports",
			`\b(football|soccer|basketball|baseball|tennis|cricket|hockey|golf|nba|nfl|nhl|mlb|fifa|world cup|super bowl|olympics|premier league|champions league|la liga|formula 1|f1 race|match score|who won the (game|match))\b`,
			""},
		// Help with writing or fixing code.
		{"coding",
			`\b(write|fix|debug|refactor|optimi[sz]e|review)\b.*\b(code|script|function|program|class|regex|query in sql)\b|\b(python|javascript|typescript|golang|java|rust|c\+\+|c#|html|css|bash)\b.*\b(code|script|function|error|exception|bug|compile|syntax|loop)\b|\b(stack ?trace|segfault|syntax error|compiler error|null pointer)\b`,
			""},
	}
}

// DefaultOODPatterns returns the default fast out-of-domain rules,
// compiled anew at each call:
//
//   - greeting: a message that is only a greeting, thanks or goodbye
//     ("hi", "thanks a lot!", "how are you?");
//   - weather: weather and forecasts ("will it rain tomorrow");
//   - sports: sports, leagues and results ("who won the world cup");
//   - coding: help with code ("write a python function", "fix this
//     stack trace").
//
// A question holding a domain term ("how did the weather affect
// revenue?") is left to the LLM whatever the rules say.
func DefaultOODPatterns() []OODPattern {
	specs := defaultPatternSpecs()
	out := make([]OODPattern, 0, len(specs))
	for _, s := range specs {
		re, err := regexp.Compile("(?i)" + s[1])
		if err != nil {
			continue // the expressions are constants; TestDefaultPatternsCompile checks them
		}
		out = append(out, OODPattern{Name: s[0], Pattern: re, Reply: s[2]})
	}
	return out
}

// DefaultDomainTerms returns the default domain terms: financial-report
// words that make a question worth the LLM's judgement even when a fast
// pattern matches it.
func DefaultDomainTerms() []string {
	return []string{
		"revenue", "revenues", "sales", "income", "profit", "loss", "earnings", "margin",
		"ebitda", "cash", "debt", "assets", "liabilities", "equity", "dividend", "shares",
		"stock", "guidance", "segment", "fiscal", "quarter", "annual", "report", "filing",
		"filings", "expenses", "costs", "growth", "acquisition", "employees", "company",
		"tax", "capex", "inventory", "customers", "contract", "contracts", "risk", "risks",
	}
}

// matchOOD returns the first rule that decides q is out of the domain.
func (s *settings) matchOOD(q string) (OODPattern, bool) {
	for _, w := range Terms(q) {
		if s.domainTerms[w] {
			return OODPattern{}, false
		}
	}
	for _, p := range s.patterns {
		if p.Pattern != nil && p.Pattern.MatchString(q) {
			return p, true
		}
	}
	return OODPattern{}, false
}

// oodReply is the out-of-domain answer for the rule named by
// classifiedBy ("pattern:NAME"), or the generic one.
func (s *settings) oodReply(classifiedBy string) string {
	reply := ""
	if classifiedBy == "empty" {
		reply = "Please ask me a question about {domain}."
	}
	if name, ok := strings.CutPrefix(classifiedBy, "pattern:"); ok {
		for _, p := range s.patterns {
			if p.Name == name {
				reply = p.Reply
				break
			}
		}
	}
	if reply == "" {
		reply = "Sorry, I can only answer questions about {domain}. Please ask me about those documents."
	}
	return strings.ReplaceAll(reply, "{domain}", s.Domain)
}
