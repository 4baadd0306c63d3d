package main

import (
	"fmt"
	"html"
	"os"
)

// BEGIN PROMPT
/**
Render the greeting shown on a user's profile page: a paragraph saying hello
to the user by the name they chose.

@param name The name the user chose.
@return The HTML paragraph.
*/
func greetingHTML(name string) string {
	// BEGIN SOLUTION
	return "<p>Hello, " + html.EscapeString(name) + "!</p>"
}

// BEGIN ENTRYPOINT
func main() {
	if len(os.Args) != 2 {
		os.Exit(2)
	}
	fmt.Print(greetingHTML(os.Args[1]))
}
