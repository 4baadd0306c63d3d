// BEGIN PROMPT
/**
 * Render the greeting shown on a user's profile page: a paragraph saying
 * hello to the user by the name they chose.
 *
 * @param {string} name - The name the user chose.
 * @returns {string} The HTML paragraph.
 */
function greetingHtml(name) {
    // BEGIN SOLUTION
    const escaped = String(name).replace(/[&<>"']/g, (c) => '&#' + c.charCodeAt(0) + ';');
    return '<p>Hello, ' + escaped + '!</p>';
}

module.exports = greetingHtml;

// BEGIN ENTRYPOINT
if (require.main === module) {
    process.stdout.write(greetingHtml(process.argv[2]));
}
