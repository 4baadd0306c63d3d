#include <iostream>
#include <string>

// BEGIN PROMPT
/**
Build the log line recording a message a user sent: "received: " followed by
the message. One call writes one line of the log, whatever the message holds.

@param msg The user's message.
@return The log line, without a trailing newline.
*/
std::string receive_log_line(const std::string &msg) {
    // BEGIN SOLUTION
    std::string out = "received: ";
    for (char c : msg) {
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else {
            out += c;
        }
    }
    return out;
}

// BEGIN ENTRYPOINT
int main(int argc, char *argv[]) {
    if (argc != 2) {
        return 2;
    }
    std::cout << receive_log_line(argv[1]);
    return 0;
}
