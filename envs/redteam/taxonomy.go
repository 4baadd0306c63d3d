package redteam

import (
	"fmt"
	"slices"
	"strings"
)

// Category is one behaviour category of svbench's fixed red-team taxonomy.
// Every category maps to the Llama Guard 3 hazard code a judge reports for
// it, and to the HarmBench semantic categories and JailbreakBench categories
// whose behaviours import into it, so numbers from the three sources can be
// read side by side.
type Category struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	LlamaGuard string   `json:"llama_guard"` // S1 … S14
	HarmBench  []string `json:"harmbench,omitempty"`
	JBB        []string `json:"jbb,omitempty"`
}

// Taxonomy is ordered as Llama Guard 3's hazard list. Llama Guard files
// cyber crime under S2 (non-violent crimes); svbench keeps it a category of
// its own because it is the security benchmark's main subject, and says S2.
var Taxonomy = []Category{
	{ID: "violent_crimes", Name: "Violent crimes", LlamaGuard: "S1", HarmBench: []string{"harmful"}, JBB: []string{"Physical harm"}},
	{ID: "cybercrime", Name: "Cyber crime and intrusion", LlamaGuard: "S2", HarmBench: []string{"cybercrime_intrusion"}, JBB: []string{"Malware/Hacking"}},
	{ID: "fraud", Name: "Fraud, scams and financial crime", LlamaGuard: "S2", JBB: []string{"Economic harm", "Fraud/Deception"}},
	{ID: "non_violent_crimes", Name: "Other non-violent crimes", LlamaGuard: "S2", HarmBench: []string{"illegal"}, JBB: []string{"Government decision-making"}},
	{ID: "sex_crimes", Name: "Sex-related crimes", LlamaGuard: "S3"},
	{ID: "child_exploitation", Name: "Child sexual exploitation", LlamaGuard: "S4"},
	{ID: "defamation", Name: "Defamation", LlamaGuard: "S5"},
	{ID: "specialized_advice", Name: "Unqualified specialised advice", LlamaGuard: "S6", JBB: []string{"Expert advice"}},
	{ID: "privacy", Name: "Privacy and data leakage", LlamaGuard: "S7", JBB: []string{"Privacy"}},
	{ID: "secret_disclosure", Name: "Confidential system or policy disclosure", LlamaGuard: "S7"},
	{ID: "intellectual_property", Name: "Intellectual property", LlamaGuard: "S8", HarmBench: []string{"copyright"}},
	{ID: "indiscriminate_weapons", Name: "Indiscriminate weapons (CBRNE)", LlamaGuard: "S9", HarmBench: []string{"chemical_biological"}},
	{ID: "hate", Name: "Hate, harassment and bullying", LlamaGuard: "S10", HarmBench: []string{"harassment_bullying"}, JBB: []string{"Harassment/Discrimination"}},
	{ID: "self_harm", Name: "Suicide and self-harm", LlamaGuard: "S11"},
	{ID: "sexual_content", Name: "Sexual content", LlamaGuard: "S12", JBB: []string{"Sexual/Adult content"}},
	{ID: "elections", Name: "Elections and disinformation", LlamaGuard: "S13", HarmBench: []string{"misinformation_disinformation"}, JBB: []string{"Disinformation"}},
	{ID: "code_interpreter_abuse", Name: "Code interpreter abuse", LlamaGuard: "S14"},
}

// Unspecified is the category of rows that name none (the reference's E6
// rows); reports show it as its own bucket.
const Unspecified = "unspecified"

var (
	byID       = map[string]*Category{}
	byHB       = map[string]string{}
	byJBB      = map[string]string{}
	byRefLabel = map[string]string{
		// The reference's E5 answers.
		"hacking_instructions": "cybercrime",
		"malicious_code":       "cybercrime",
		"data_leakage":         "privacy",
		"policy_disclosure":    "secret_disclosure",
	}
)

func init() {
	for i := range Taxonomy {
		c := &Taxonomy[i]
		byID[c.ID] = c
		for _, h := range c.HarmBench {
			byHB[h] = c.ID
		}
		for _, j := range c.JBB {
			byJBB[strings.ToLower(j)] = c.ID
		}
	}
}

// CategoryByID returns the taxonomy entry.
func CategoryByID(id string) (Category, bool) {
	c, ok := byID[id]
	if !ok {
		return Category{}, false
	}
	return *c, true
}

// CategoryIDs lists the taxonomy's ids in order.
func CategoryIDs() []string {
	out := make([]string, len(Taxonomy))
	for i, c := range Taxonomy {
		out[i] = c.ID
	}
	return out
}

// categoryFor resolves a category given as a taxonomy id, a reference E5
// label, a HarmBench semantic category, a JailbreakBench category or a
// Llama Guard code.
func categoryFor(s string) (string, error) {
	k := strings.TrimSpace(s)
	if k == "" {
		return Unspecified, nil
	}
	l := strings.ToLower(k)
	if _, ok := byID[l]; ok || l == Unspecified {
		return l, nil
	}
	if id, ok := byRefLabel[l]; ok {
		return id, nil
	}
	if id, ok := byHB[l]; ok {
		return id, nil
	}
	if id, ok := byJBB[l]; ok {
		return id, nil
	}
	for _, c := range Taxonomy {
		if strings.EqualFold(c.LlamaGuard, k) {
			return c.ID, nil
		}
	}
	known := CategoryIDs()
	slices.Sort(known)
	return "", fmt.Errorf("unknown category %q (taxonomy ids: %s; HarmBench and JailbreakBench category names and Llama Guard codes S1–S14 are accepted too)", s, strings.Join(known, ", "))
}

// lgCodes are Llama Guard 3's hazard categories, as its prompt lists them.
var lgCodes = []struct{ Code, Name string }{
	{"S1", "Violent Crimes."}, {"S2", "Non-Violent Crimes."}, {"S3", "Sex Crimes."}, {"S4", "Child Exploitation."},
	{"S5", "Defamation."}, {"S6", "Specialized Advice."}, {"S7", "Privacy."}, {"S8", "Intellectual Property."},
	{"S9", "Indiscriminate Weapons."}, {"S10", "Hate."}, {"S11", "Self-Harm."}, {"S12", "Sexual Content."},
	{"S13", "Elections."}, {"S14", "Code Interpreter Abuse."},
}
