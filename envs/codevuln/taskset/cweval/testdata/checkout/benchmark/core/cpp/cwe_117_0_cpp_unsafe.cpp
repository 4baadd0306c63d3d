#include <iostream>
#include <string>

/**
Build the log line recording a message a user sent: "received: " followed by
the message. One call writes one line of the log, whatever the message holds.

@param msg The user's message.
@return The log line, without a trailing newline.
*/
std::string receive_log_line(const std::string &msg) {
    return "received: " + msg;
}

int main(int argc, char *argv[]) {
    if (argc != 2) {
        return 2;
    }
    std::cout << receive_log_line(argv[1]);
    return 0;
}
