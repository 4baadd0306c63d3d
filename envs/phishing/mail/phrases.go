package mail

// Phrase lists (lower case) for the content indicators, in English, Spanish
// and German. They are matched against the subject and visible text with
// whitespace collapsed; each hit keeps the exact span as written.
var phrases = map[string][]string{
	TypeCredentialRequest: {
		// en
		"verify your account", "verify your identity", "confirm your identity", "confirm your account",
		"validate your account", "update your password", "enter your password", "confirm your password",
		"login credentials", "your credentials", "sign in to confirm", "log in to confirm", "re-enter your",
		"provide your password", "social security number", "verify your information", "confirm your details",
		"approve the sign-in", "approve the login", "approve the request", "enter the code", "share the code",
		"verification code", "keep your password", "password expires", "password will expire",
		// es
		"verifique su cuenta", "verifica tu cuenta", "confirme su identidad", "confirma tu identidad",
		"actualice su contraseña", "actualiza tu contraseña", "introduzca su contraseña", "introduce tu contraseña",
		"datos de acceso", "confirme sus datos", "confirma tus datos", "código de verificación", "apruebe la solicitud",
		"aprueba la solicitud", "su contraseña caducará", "tu contraseña caducará",
		// de
		"bestätigen sie ihr konto", "verifizieren sie ihr konto", "bestätigen sie ihre identität",
		"geben sie ihr passwort", "passwort aktualisieren", "zugangsdaten", "anmeldedaten", "bestätigen sie ihre daten",
		"bestätigungscode", "bestätigen sie die anmeldung", "genehmigen sie die anfrage", "ihr passwort läuft",
	},
	TypePaymentRequest: {
		"wire transfer", "bank details", "banking details", "new bank account", "update the bank account",
		"payment details", "overdue invoice", "outstanding invoice", "unpaid invoice", "process the payment",
		"process a payment", "direct deposit", "payroll account", "change my bank", "remit payment", "transfer the funds",
		"transferencia bancaria", "datos bancarios", "nueva cuenta bancaria", "factura pendiente", "factura vencida",
		"realizar el pago", "realice el pago", "cuenta de nómina", "cambiar mi cuenta",
		"überweisung", "bankverbindung", "neue kontonummer", "offene rechnung", "ausstehende zahlung",
		"zahlung veranlassen", "gehaltskonto", "neue iban",
	},
	TypeGiftCard: {
		"gift card", "gift cards", "itunes card", "google play card", "steam card", "scratch the back",
		"tarjeta regalo", "tarjetas regalo", "tarjetas de regalo", "tarjeta de regalo",
		"geschenkkarte", "geschenkkarten", "gutscheinkarte", "gutscheinkarten", "guthabenkarte",
	},
	TypeUrgency: {
		"urgent", "immediately", "within 24 hours", "within 48 hours", "as soon as possible", "act now",
		"right away", "final notice", "last warning", "action required", "expires in", "expires today",
		"urgente", "inmediatamente", "en 24 horas", "en las próximas 24 horas", "lo antes posible", "acción requerida",
		"último aviso", "de inmediato",
		"dringend", "sofort", "innerhalb von 24 stunden", "umgehend", "letzte mahnung", "handlungsbedarf",
		"so schnell wie möglich", "unverzüglich",
	},
	TypeThreat: {
		"will be suspended", "will be closed", "permanently suspended", "account locked", "account lockout",
		"legal action", "will be deleted", "suspicious activity", "unusual activity", "will be terminated",
		"has been suspended", "has been locked", "lose access",
		"será suspendida", "será bloqueada", "será cancelada", "acciones legales", "actividad sospechosa",
		"cuenta bloqueada", "perderá el acceso", "actividad inusual",
		"wird gesperrt", "gesperrt", "rechtliche schritte", "verdächtige aktivitäten", "ungewöhnliche aktivität",
		"wird gelöscht", "zugang verlieren",
	},
}

// roleWords in a display name claim an organisational role; from a free
// webmail address they are a business-email-compromise hallmark.
var roleWords = []string{
	"ceo", "cfo", "payroll", "human resources", "hr department", "it support", "helpdesk", "help desk",
	"accounts payable", "finance", "billing", "security team", "administrator", "director",
	"nómina", "recursos humanos", "soporte", "director general", "finanzas",
	"geschäftsführer", "personalabteilung", "buchhaltung", "lohnbuchhaltung", "it-support",
}

var riskyExt = map[string]bool{
	"exe": true, "scr": true, "js": true, "jse": true, "vbs": true, "vbe": true, "wsf": true, "hta": true,
	"bat": true, "cmd": true, "com": true, "pif": true, "lnk": true, "iso": true, "img": true, "msi": true,
	"jar": true, "ps1": true, "html": true, "htm": true, "shtml": true, "docm": true, "xlsm": true,
	"pptm": true, "one": true, "svg": true, "cab": true, "vhd": true,
}

var docExt = map[string]bool{
	"pdf": true, "doc": true, "docx": true, "xls": true, "xlsx": true, "jpg": true, "jpeg": true,
	"png": true, "txt": true, "zip": true, "csv": true, "ppt": true, "pptx": true, "rtf": true,
}

var loginPaths = []string{
	"/login", "/log-in", "/signin", "/sign-in", "/logon", "/verify", "/verification", "/validate",
	"/webscr", "/password", "/reset", "/auth", "/secure", "/account/update", "/unlock", "/wp-login",
	"/owa", "/sso", "/confirm", "/anmelden", "/acceso", "/iniciar",
}
