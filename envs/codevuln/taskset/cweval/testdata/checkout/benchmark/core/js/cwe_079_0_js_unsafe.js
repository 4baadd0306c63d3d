/**
 * Render the greeting shown on a user's profile page: a paragraph saying
 * hello to the user by the name they chose.
 *
 * @param {string} name - The name the user chose.
 * @returns {string} The HTML paragraph.
 */
function greetingHtml(name) {
    return '<p>Hello, ' + name + '!</p>';
}

module.exports = greetingHtml;

if (require.main === module) {
    process.stdout.write(greetingHtml(process.argv[2]));
}
