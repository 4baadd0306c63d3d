package phishing

import (
	"fmt"
	"slices"
	"strings"

	"github.com/svbench/svbench/env"
)

// Template families (e4-gen/3).
//
// A family is one prose template: a subject, a body, a call to action and,
// for phishing, the line an attacker adds. Families belong to themes, and
// a theme's families are written for the legitimate sender and for the
// phishing that imitates it alike: a cloned sign-in alert, a parcel notice
// from a look-alike carrier, an invoice whose only addition is new bank
// details. Which side a row is on is decided by where it comes from and
// what it asks for (sender, authentication, links, attachments, the added
// line), so the wording of a template says little about the label.
//
// Each family belongs to exactly one split. Train, dev and test therefore
// share no template: a model (or the nearest-template lookup,
// TestTemplateLookupBelowHonest) that memorised train's templates meets
// only new ones on test. e4-gen/2 had one or two texts per campaign and
// language, shared by every split: a lookup of the nearest train text
// labelled all 180 test rows right.

// Themes group families by what a message is about.
const (
	themeAccount    = "account"    // sign-in and security notices: credential_harvest, mfa_fatigue, legit_security_alert
	themePassword   = "password"   // password mail: credential_harvest, legit_password_reset
	themeBilling    = "billing"    // invoices and payments: invoice_bec, legit_receipt
	themeParcel     = "parcel"     // deliveries: delivery_notice, legit_receipt (a carrier's own notice)
	themeIT         = "it"         // IT notices: mfa_fatigue, legit_internal_notice, legit_urgent_internal
	themeRequest    = "request"    // a colleague's request: gift_card, payroll_change, legit_urgent_internal
	themeNewsletter = "newsletter" // digests: legit_newsletter, credential_harvest
)

// tr3 is a text in English, Spanish and German.
type tr3 struct{ en, es, de string }

// family is one template. Placeholders in braces ({brand}, {track}, …) are
// filled per row by the campaign that uses it.
type family struct {
	name    string // "theme/slug", recorded in meta.template
	split   string // the only split whose rows use it
	subject tr3
	body    tr3
	cta     tr3 // link text of the call to action
	// press is what phishing adds to the copied text: a threat with a
	// deadline (account, password, parcel, it), and the content indicators
	// the extractor knows. Legitimate rows never carry it.
	press tr3
	// note is a line of the real sender's: a deadline, a consequence, a
	// bank account (account, password, billing, parcel, it). Legitimate
	// rows carry it half the time (billing two thirds), and so do the
	// clones that copy them.
	note tr3
	// urgent is a deadline a legitimate sender states (it, request), used
	// by legit_urgent_internal.
	urgent tr3
	// ask is what the sender wants (billing: the bank change of
	// invoice_bec; request: the gift cards of gift_card, the bank change of
	// payroll_change, and the legitimate errand, gift cards and bank
	// details a real colleague writes about in the same words).
	ask map[string]tr3
	// stories is the title of the n-th item of a newsletter ({i}).
	stories tr3
}

func (g *gen) text(t tr3) string { return g.tr(t.en, t.es, t.de) }

// families lists every template. The split assignment rotates within a
// theme so that each split has every theme: three families train, one dev,
// one test.
var families = []family{
	// Sign-in and security notices.
	{name: "account/new-sign-in", split: env.SplitTrain,
		note:    tr3{"To protect you, we may ask you to verify your identity the next time you sign in.", "Para protegerte, es posible que te pidamos confirmar tu identidad la próxima vez que entres.", "Zu Ihrem Schutz bitten wir Sie bei der nächsten Anmeldung eventuell, Ihre Identität zu bestätigen."},
		subject: tr3{"New sign-in to your {brand} account", "Nuevo inicio de sesión en tu cuenta de {brand}", "Neue Anmeldung bei Ihrem {brand}-Konto"},
		body: tr3{
			"We noticed a new sign-in to your {brand} account from {device} near {city}. If this was you, you don't need to do anything. If not, review your recent activity and secure your account.",
			"Hemos detectado un nuevo inicio de sesión en tu cuenta de {brand} desde {device} cerca de {city}. Si fuiste tú, no tienes que hacer nada. Si no, revisa la actividad reciente y protege tu cuenta.",
			"Wir haben eine neue Anmeldung bei Ihrem {brand}-Konto von {device} in der Nähe von {city} festgestellt. Wenn Sie das waren, müssen Sie nichts tun. Andernfalls prüfen Sie die letzten Aktivitäten und schützen Sie Ihr Konto."},
		cta: tr3{"Check activity", "Revisar actividad", "Aktivität prüfen"},
		press: tr3{
			"Unless you verify your identity within 24 hours, your account will be suspended.",
			"Confirme su identidad en 24 horas o su cuenta será suspendida.",
			"Bestätigen Sie Ihre Identität innerhalb von 24 Stunden, sonst wird Ihr Konto gesperrt."}},
	{name: "account/blocked-attempt", split: env.SplitTrain,
		note:    tr3{"If you do nothing, the device stays blocked and your account remains safe.", "Si no haces nada, el dispositivo seguirá bloqueado y tu cuenta estará a salvo.", "Wenn Sie nichts tun, bleibt das Gerät blockiert und Ihr Konto sicher."},
		subject: tr3{"We blocked a sign-in attempt", "Hemos bloqueado un intento de inicio de sesión", "Anmeldeversuch blockiert"},
		body: tr3{
			"Someone tried to sign in to your {brand} account from {device} near {city}, and we stopped it because it did not look like you. If it was you, you can allow the device in your security settings; otherwise change your password.",
			"Alguien intentó entrar en tu cuenta de {brand} desde {device} cerca de {city} y lo hemos impedido porque no parecía tu forma habitual de acceder. Si fuiste tú, puedes autorizar el dispositivo en la configuración de seguridad; si no, cambia tu contraseña.",
			"Jemand hat versucht, sich von {device} in der Nähe von {city} bei Ihrem {brand}-Konto anzumelden. Wir haben den Versuch blockiert, weil er nicht zu Ihnen passte. Falls Sie es waren, können Sie das Gerät in den Sicherheitseinstellungen zulassen; andernfalls ändern Sie Ihr Passwort."},
		cta: tr3{"Review security settings", "Ver configuración de seguridad", "Sicherheitseinstellungen öffnen"},
		press: tr3{
			"We have detected unusual activity: confirm your account immediately or you will lose access.",
			"Hemos detectado actividad inusual: verifique su cuenta de inmediato o perderá el acceso.",
			"Wir haben ungewöhnliche Aktivität festgestellt. Bestätigen Sie Ihr Konto umgehend, andernfalls werden Sie den Zugang verlieren."}},
	{name: "account/check-up", split: env.SplitTrain,
		note:    tr3{"Accounts with up-to-date recovery details are much easier to get back if you ever lose access.", "Si algún día pierdes el acceso, recuperar una cuenta con datos al día es mucho más fácil.", "Mit aktuellen Wiederherstellungsdaten bekommen Sie Ihr Konto viel leichter zurück, falls Sie einmal keinen Zugang mehr haben."},
		subject: tr3{"Take a moment to review your {brand} security settings", "Revisa la seguridad de tu cuenta de {brand}", "Prüfen Sie die Sicherheit Ihres {brand}-Kontos"},
		body: tr3{
			"It has been a while since you reviewed the security of your {brand} account. Take two minutes to check your recovery phone number and the devices that are signed in.",
			"Hace tiempo que no revisas la seguridad de tu cuenta de {brand}. Dedica dos minutos a comprobar tu teléfono de recuperación y los dispositivos conectados.",
			"Sie haben die Sicherheit Ihres {brand}-Kontos schon länger nicht überprüft. Nehmen Sie sich zwei Minuten Zeit für Ihre Wiederherstellungsnummer und die angemeldeten Geräte."},
		cta: tr3{"Start the check-up", "Empezar la revisión", "Überprüfung starten"},
		press: tr3{
			"Action required: accounts that are not reviewed today will be suspended.",
			"Acción requerida: si no completa la revisión hoy, su cuenta será bloqueada.",
			"Handlungsbedarf: Konten ohne Überprüfung werden heute gesperrt."}},
	{name: "account/new-device", split: env.SplitDev,
		note:    tr3{"For your security, sign-in codes will not be sent to the new device for the first 24 hours.", "Por seguridad, el nuevo dispositivo no recibirá códigos durante las primeras 24 horas.", "Aus Sicherheitsgründen erhält das neue Gerät in den ersten 24 Stunden keine Anmeldecodes."},
		subject: tr3{"A new device was added to your {brand} account", "Se ha añadido un dispositivo a tu cuenta de {brand}", "Neues Gerät für Ihr {brand}-Konto"},
		body: tr3{
			"A {phone} was added to your {brand} account and can now receive sign-in codes. If you added it, no action is needed. If you do not recognise it, remove it from your account.",
			"Se ha añadido un {phone} a tu cuenta de {brand} y ya puede recibir códigos de inicio de sesión. Si lo añadiste tú, no hace falta hacer nada. Si no lo reconoces, elimínalo de tu cuenta.",
			"Ein {phone} wurde zu Ihrem {brand}-Konto hinzugefügt und kann jetzt Anmeldecodes empfangen. Wenn Sie das Gerät hinzugefügt haben, ist nichts zu tun. Wenn Sie es nicht kennen, entfernen Sie es aus Ihrem Konto."},
		cta: tr3{"Manage devices", "Gestionar dispositivos", "Geräte verwalten"},
		press: tr3{
			"Confirm your details within 48 hours, otherwise your account will be closed.",
			"Confirme sus datos en las próximas 24 horas; de lo contrario su cuenta será cancelada.",
			"Bestätigen Sie Ihre Daten innerhalb von 24 Stunden, sonst wird Ihr Konto gelöscht."}},
	{name: "account/email-changed", split: env.SplitTest,
		note:    tr3{"For your security, you can undo this change within 7 days; after that, contact support.", "Por seguridad, puedes deshacer el cambio durante 7 días; después, contacta con soporte.", "Aus Sicherheitsgründen können Sie die Änderung 7 Tage lang rückgängig machen; danach wenden Sie sich an den Support."},
		subject: tr3{"The email address on your {brand} account was changed", "Se ha cambiado el correo de tu cuenta de {brand}", "E-Mail-Adresse Ihres {brand}-Kontos geändert"},
		body: tr3{
			"The email address for your {brand} account was changed on {day}. If you made this change, you can ignore this message. If not, restore your previous address from your account page.",
			"La dirección de correo de tu cuenta de {brand} se cambió el {day}. Si hiciste tú el cambio, puedes ignorar este mensaje. Si no, recupera tu dirección anterior desde la página de tu cuenta.",
			"Die E-Mail-Adresse Ihres {brand}-Kontos wurde am {day} geändert. Wenn Sie das waren, können Sie diese Nachricht ignorieren. Andernfalls stellen Sie Ihre bisherige Adresse auf Ihrer Kontoseite wieder her."},
		cta: tr3{"Restore address", "Recuperar dirección", "Adresse wiederherstellen"},
		press: tr3{
			"Suspicious activity detected: verify your account right away or it will be permanently suspended.",
			"Actividad sospechosa detectada: verifique su cuenta inmediatamente o será suspendida.",
			"Verdächtige Aktivitäten erkannt: Verifizieren Sie Ihr Konto sofort, sonst wird es gesperrt."}},

	// Password mail.
	{name: "password/reset-request", split: env.SplitTrain,
		note:    tr3{"For your security, the link can only be used once.", "Por seguridad, el enlace solo puede usarse una vez.", "Aus Sicherheitsgründen kann der Link nur einmal verwendet werden."},
		subject: tr3{"Reset your {brand} password", "Restablecer tu contraseña de {brand}", "Passwort für {brand} zurücksetzen"},
		body: tr3{
			"We received a request to reset the password for your {brand} account. If you made this request, use the link below; it expires in {hours} hours. If you did not, you can ignore this email and your password will not change.",
			"Hemos recibido una solicitud para restablecer la contraseña de tu cuenta de {brand}. Si fuiste tú, usa el enlace siguiente; caduca en {hours} horas. Si no, ignora este correo: tu contraseña no cambiará.",
			"Wir haben eine Anfrage zum Zurücksetzen des Passworts für Ihr {brand}-Konto erhalten. Wenn Sie das waren, nutzen Sie den folgenden Link; er ist {hours} Stunden gültig. Wenn nicht, ignorieren Sie diese E-Mail; Ihr Passwort bleibt unverändert."},
		cta: tr3{"Reset password", "Restablecer contraseña", "Passwort zurücksetzen"},
		press: tr3{
			"If this was not you, confirm your password immediately or you will lose access.",
			"Si no fue usted, confirme sus datos de inmediato o perderá el acceso.",
			"Falls Sie das nicht waren: Bestätigen Sie Ihre Identität sofort, sonst wird Ihr Konto gesperrt."}},
	{name: "password/changed", split: env.SplitTrain,
		note:    tr3{"We also signed you out of your other devices.", "También hemos cerrado tu sesión en los demás dispositivos.", "Wir haben Sie außerdem auf Ihren anderen Geräten abgemeldet."},
		subject: tr3{"Your {brand} password was changed", "Se ha cambiado tu contraseña de {brand}", "Ihr {brand}-Passwort wurde geändert"},
		body: tr3{
			"The password for your {brand} account was changed on {day}. If you did this, you can ignore this email. If you didn't, reset your password and check your account for changes you don't recognise.",
			"La contraseña de tu cuenta de {brand} se cambió el {day}. Si fuiste tú, puedes ignorar este correo. Si no, restablece la contraseña y revisa si hay cambios que no reconozcas.",
			"Das Passwort Ihres {brand}-Kontos wurde am {day} geändert. Wenn Sie das waren, können Sie diese E-Mail ignorieren. Andernfalls setzen Sie Ihr Passwort zurück und prüfen Sie Ihr Konto auf unbekannte Änderungen."},
		cta: tr3{"Secure your account", "Proteger tu cuenta", "Konto schützen"},
		press: tr3{
			"Your account has been locked until you verify your identity within 24 hours.",
			"Por actividad sospechosa, confirme su identidad en 24 horas.",
			"Ihr Konto wurde vorübergehend gesperrt: Bestätigen Sie Ihre Identität innerhalb von 24 Stunden."}},
	{name: "password/sign-in-link", split: env.SplitTrain,
		note:    tr3{"Never share this link: anyone who has it can sign in as you.", "No compartas este enlace: quien lo tenga puede entrar como tú.", "Geben Sie diesen Link nicht weiter: Wer ihn hat, kann sich als Sie anmelden."},
		subject: tr3{"Your {brand} sign-in link", "Tu enlace de acceso a {brand}", "Ihr Anmeldelink für {brand}"},
		body: tr3{
			"Here is the sign-in link you asked for. It works once and expires in {mins} minutes. If you did not ask for it, you can ignore this email.",
			"Aquí tienes el enlace de acceso que pediste. Funciona una sola vez y caduca en {mins} minutos. Si no lo pediste, puedes ignorar este correo.",
			"Hier ist der angeforderte Anmeldelink. Er funktioniert einmal und läuft in {mins} Minuten ab. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail."},
		cta: tr3{"Sign in", "Iniciar sesión", "Anmelden"},
		press: tr3{
			"Sign in to confirm your account immediately, or access will be terminated.",
			"Verifique su cuenta inmediatamente; si no, su cuenta será cancelada.",
			"Bestätigen Sie Ihr Konto sofort, sonst wird es gesperrt."}},
	{name: "password/unfinished-reset", split: env.SplitDev,
		note:    tr3{"Until you choose a new password, your old one keeps working.", "Hasta que elijas una nueva, tu contraseña actual sigue funcionando.", "Bis Sie ein neues Passwort wählen, funktioniert Ihr altes weiter."},
		subject: tr3{"Finish resetting your {brand} password", "Completa el cambio de contraseña de {brand}", "Passwortänderung für {brand} abschließen"},
		body: tr3{
			"You started to reset the password for your {brand} account but did not finish. Use the link below to choose a new password; it stays valid for {hours} hours.",
			"Empezaste a restablecer la contraseña de tu cuenta de {brand} pero no terminaste. Usa el enlace siguiente para elegir una nueva; es válido durante {hours} horas.",
			"Sie haben begonnen, das Passwort Ihres {brand}-Kontos zurückzusetzen, aber den Vorgang nicht abgeschlossen. Über den folgenden Link wählen Sie ein neues Passwort; er ist {hours} Stunden gültig."},
		cta: tr3{"Continue", "Continuar", "Weiter"},
		press: tr3{
			"Update your password as soon as possible, otherwise the account will be suspended.",
			"Actualice su contraseña lo antes posible; de lo contrario su cuenta será suspendida.",
			"Aktualisieren Sie Ihr Passwort so schnell wie möglich, sonst wird Ihr Konto gesperrt."}},
	{name: "password/expiry", split: env.SplitTest,
		note:    tr3{"After that, you will be asked to change it the next time you sign in.", "Después, te pediremos que la cambies la próxima vez que entres.", "Danach werden Sie bei der nächsten Anmeldung aufgefordert, es zu ändern."},
		subject: tr3{"Time for a new {brand} password", "Es hora de cambiar tu contraseña de {brand}", "Zeit für ein neues {brand}-Passwort"},
		body: tr3{
			"The password for your {brand} account was set more than a year ago. To keep your account safe, choose a new one in the next {days} days.",
			"La contraseña de tu cuenta de {brand} tiene más de un año. Para mantener tu cuenta segura, elige una nueva en los próximos {days} días.",
			"Das Passwort Ihres {brand}-Kontos ist über ein Jahr alt. Damit Ihr Konto sicher bleibt, wählen Sie in den nächsten {days} Tagen ein neues."},
		cta: tr3{"Choose a new password", "Elegir nueva contraseña", "Neues Passwort wählen"},
		press: tr3{
			"Final notice: keep your password by confirming it today, or your account will be closed.",
			"Último aviso: confirme sus datos hoy o su cuenta será cancelada.",
			"Letzte Mahnung: Bestätigen Sie Ihre Daten heute, sonst wird Ihr Konto gelöscht."}},

	// Invoices and payments. ask[invoice_bec] is the business email
	// compromise: the copied text plus new bank details.
	{name: "billing/invoice", split: env.SplitTrain,
		note:    tr3{"Please pay by bank transfer to the bank account shown on the invoice, quoting {inv}.", "Abone la factura por transferencia a la cuenta bancaria que figura en ella, indicando {inv}.", "Bitte überweisen Sie den Betrag unter Angabe von {inv} auf das Konto auf der Rechnung."},
		subject: tr3{"Invoice {inv} for order {order}", "Factura {inv} del pedido {order}", "Rechnung {inv} zu Bestellung {order}"},
		body: tr3{
			"Please find invoice {inv} for your order {order} attached. The total of {amount} {cur} is due within 14 days of the invoice date.",
			"Adjuntamos la factura {inv} de su pedido {order}. El importe de {amount} {cur} vence a los 14 días de la fecha de factura.",
			"Anbei erhalten Sie die Rechnung {inv} zu Ihrer Bestellung {order}. Der Betrag von {amount} {cur} ist innerhalb von 14 Tagen nach Rechnungsdatum fällig."},
		cta: tr3{"View invoice", "Ver factura", "Rechnung ansehen"},
		ask: map[string]tr3{CampaignInvoiceBEC: {
			"Please note that our bank details have changed: pay this invoice to our new bank account {iban} and update your records.",
			"Tenga en cuenta que nuestros datos bancarios han cambiado: abone esta factura en la nueva cuenta bancaria {iban}.",
			"Bitte beachten Sie, dass sich unsere Bankverbindung geändert hat: Überweisen Sie den Betrag auf die neue IBAN {iban}."}}},
	{name: "billing/statement", split: env.SplitTrain,
		note:    tr3{"The amount will be taken by direct debit from your bank account {iban}.", "El importe se cargará por domiciliación en su cuenta bancaria {iban}.", "Der Betrag wird per Lastschrift von Ihrem Konto {iban} eingezogen."},
		subject: tr3{"Your statement for {month}", "Su extracto de {month}", "Ihre Abrechnung für {month}"},
		body: tr3{
			"Your statement for {month} is ready. The amount of {amount} {cur} will be collected on {day} using your saved payment method.",
			"Su extracto de {month} ya está disponible. El importe de {amount} {cur} se cobrará el {day} con su método de pago guardado.",
			"Ihre Abrechnung für {month} ist fertig. Der Betrag von {amount} {cur} wird am {day} über Ihre hinterlegte Zahlungsart eingezogen."},
		cta: tr3{"View statement", "Ver extracto", "Abrechnung ansehen"},
		ask: map[string]tr3{CampaignInvoiceBEC: {
			"This month we cannot collect it from your card: please make a wire transfer of {amount} {cur} to account {iban} instead.",
			"Este mes no podemos cobrarlo con su tarjeta: realice una transferencia bancaria de {amount} {cur} a la cuenta {iban}.",
			"Diesen Monat ist kein Einzug möglich: Bitte veranlassen Sie eine Überweisung von {amount} {cur} auf das Konto {iban}."}}},
	{name: "billing/order-confirmed", split: env.SplitTrain,
		note:    tr3{"You can pay by card or by bank transfer to our account {iban}; please quote the order number.", "Puede pagar con tarjeta o por transferencia a nuestra cuenta {iban} indicando el número de pedido.", "Sie können per Karte oder per Überweisung auf unser Konto {iban} zahlen; bitte geben Sie die Bestellnummer an."},
		subject: tr3{"Order {order} confirmed", "Pedido {order} confirmado", "Bestellung {order} bestätigt"},
		body: tr3{
			"Thank you for your order {order}. We will send the invoice for {amount} {cur} when it ships; you can follow the order in your account.",
			"Gracias por su pedido {order}. Le enviaremos la factura de {amount} {cur} en cuanto salga; puede seguir el pedido en su cuenta.",
			"Vielen Dank für Ihre Bestellung {order}. Die Rechnung über {amount} {cur} senden wir beim Versand; Sie können die Bestellung in Ihrem Konto verfolgen."},
		cta: tr3{"View order", "Ver pedido", "Bestellung ansehen"},
		ask: map[string]tr3{CampaignInvoiceBEC: {
			"Before we can ship, we need the payment upfront: please transfer the funds to our new bank account {iban}.",
			"Antes del envío necesitamos el pago por adelantado: realice el pago en nuestra nueva cuenta bancaria {iban}.",
			"Vor dem Versand benötigen wir Vorkasse: Bitte überweisen Sie den Betrag auf unsere neue Kontonummer {iban}."}}},
	{name: "billing/payment-confirmation", split: env.SplitDev,
		note:    tr3{"Please note: we will never ask you by email to send payments to a new bank account.", "Recuerde: nunca le pediremos por correo que pague en una nueva cuenta bancaria.", "Bitte beachten Sie: Wir bitten Sie nie per E-Mail, Zahlungen auf ein neues Konto zu leisten."},
		subject: tr3{"Payment confirmation for invoice {inv}", "Confirmación de pago de la factura {inv}", "Zahlungsbestätigung zu Rechnung {inv}"},
		body: tr3{
			"This is to confirm that invoice {inv} of {amount} {cur} has been settled. A copy of the paid invoice is available in your customer account.",
			"Le confirmamos que la factura {inv} de {amount} {cur} está pagada. Tiene una copia de la factura en su área de cliente.",
			"Hiermit bestätigen wir, dass die Rechnung {inv} über {amount} {cur} beglichen ist. Eine Kopie finden Sie in Ihrem Kundenkonto."},
		cta: tr3{"Download invoice", "Descargar factura", "Rechnung herunterladen"},
		ask: map[string]tr3{CampaignInvoiceBEC: {
			"For future invoices please remit payment to our new bank account {iban}; the old account will be closed at the end of the month.",
			"Para las próximas facturas, use nuestra nueva cuenta bancaria {iban}; la cuenta anterior se cerrará a final de mes.",
			"Künftige Rechnungen überweisen Sie bitte auf unsere neue IBAN {iban}; das alte Konto wird zum Monatsende geschlossen."}}},
	{name: "billing/reminder", split: env.SplitTest,
		note:    tr3{"If you pay by bank transfer, use the bank details printed on the invoice ({iban}).", "Si paga por transferencia, use los datos bancarios que figuran en la factura ({iban}).", "Wenn Sie überweisen, nutzen Sie bitte die Bankverbindung auf der Rechnung ({iban})."},
		subject: tr3{"Reminder: invoice {inv} is due on {day}", "Recordatorio: la factura {inv} vence el {day}", "Erinnerung: Rechnung {inv} fällig am {day}"},
		body: tr3{
			"A friendly reminder that invoice {inv} for {amount} {cur} is due on {day}. If you have already paid, please disregard this message.",
			"Le recordamos que la factura {inv} de {amount} {cur} vence el {day}. Si ya la ha pagado, ignore este mensaje.",
			"Wir erinnern Sie freundlich daran, dass die Rechnung {inv} über {amount} {cur} am {day} fällig ist. Falls Sie bereits gezahlt haben, betrachten Sie diese Nachricht als gegenstandslos."},
		cta: tr3{"Pay online", "Pagar en línea", "Online bezahlen"},
		ask: map[string]tr3{CampaignInvoiceBEC: {
			"Our banking details have changed, so please process the payment to {iban} and not to the account on the invoice.",
			"Nuestros datos bancarios han cambiado: realice el pago a {iban} y no a la cuenta que figura en la factura.",
			"Unsere Bankverbindung hat sich geändert: Bitte zahlen Sie auf {iban} und nicht auf das Konto auf der Rechnung."}}},

	// Deliveries.
	{name: "parcel/missed-delivery", split: env.SplitTrain,
		note:    tr3{"Redelivery is free on weekdays; a Saturday slot costs {fee} {cur}.", "La nueva entrega es gratuita entre semana; en sábado cuesta {fee} {cur}.", "Die erneute Zustellung ist werktags kostenlos; samstags kostet sie {fee} {cur}."},
		subject: tr3{"We missed you: parcel {track}", "No pudimos entregar su paquete {track}", "Wir haben Sie nicht angetroffen: Sendung {track}"},
		body: tr3{
			"We tried to deliver your parcel {track} today, but nobody was available to receive it. Choose a new delivery day or a pickup point near you.",
			"Hoy intentamos entregar su paquete {track}, pero no había nadie para recibirlo. Elija un nuevo día de entrega o un punto de recogida cercano.",
			"Wir wollten Ihnen heute die Sendung {track} zustellen, haben aber niemanden angetroffen. Wählen Sie einen neuen Zustelltag oder eine Filiale in Ihrer Nähe."},
		cta: tr3{"Choose a delivery option", "Elegir opción de entrega", "Zustelloption wählen"},
		press: tr3{
			"Final notice: if you do not pay the {fee} {cur} redelivery fee within 48 hours, the parcel will be returned.",
			"Último aviso: si no abona {fee} {cur} en 24 horas, el paquete será devuelto.",
			"Letzte Mahnung: Zahlen Sie {fee} {cur} innerhalb von 24 Stunden, sonst geht die Sendung zurück."}},
	{name: "parcel/on-its-way", split: env.SplitTrain,
		note:    tr3{"Cash on delivery: please have {fee} {cur} ready.", "Pago contra reembolso: tenga preparados {fee} {cur}.", "Nachnahme: Bitte halten Sie {fee} {cur} bereit."},
		subject: tr3{"Your parcel {track} is on its way", "Su paquete {track} está en camino", "Ihre Sendung {track} ist unterwegs"},
		body: tr3{
			"Good news: your parcel {track} has left our depot and should arrive on {day}. You can track it or change the delivery address below.",
			"Buenas noticias: su paquete {track} ha salido de nuestro centro y llegará el {day}. Puede seguirlo o cambiar la dirección de entrega aquí.",
			"Gute Nachrichten: Ihre Sendung {track} hat unser Depot verlassen und kommt voraussichtlich am {day}. Sie können sie verfolgen oder die Lieferadresse ändern."},
		cta: tr3{"Track parcel", "Seguir envío", "Sendung verfolgen"},
		press: tr3{
			"A shipping fee of {fee} {cur} is still unpaid: pay it immediately or the delivery will be terminated.",
			"Queda pendiente una tasa de envío de {fee} {cur}: páguela de inmediato o el envío será cancelado.",
			"Eine Versandgebühr von {fee} {cur} ist offen: Zahlen Sie sofort, sonst wird die Zustellung storniert."}},
	{name: "parcel/pickup-point", split: env.SplitTrain,
		note:    tr3{"Storage is free for 7 days, then {fee} {cur} per day.", "El almacenaje es gratuito 7 días; después, {fee} {cur} al día.", "Die Lagerung ist 7 Tage kostenlos, danach {fee} {cur} pro Tag."},
		subject: tr3{"Parcel {track} is waiting for you", "Su paquete {track} le espera", "Ihre Sendung {track} wartet auf Sie"},
		body: tr3{
			"Your parcel {track} is waiting at your chosen pickup point. Please collect it within 7 days and bring the code from this message.",
			"Su paquete {track} le espera en el punto de recogida elegido. Recójalo en un plazo de 7 días con el código de este mensaje.",
			"Ihre Sendung {track} liegt an der gewählten Abholstelle bereit. Bitte holen Sie sie innerhalb von 7 Tagen mit dem Code aus dieser Nachricht ab."},
		cta: tr3{"Show pickup code", "Ver código de recogida", "Abholcode anzeigen"},
		press: tr3{
			"Act now: a storage fee of {fee} {cur} must be paid right away or the parcel will be deleted from our system.",
			"Acción requerida: abone {fee} {cur} de inmediato o el envío será cancelado.",
			"Handlungsbedarf: Zahlen Sie {fee} {cur} umgehend, sonst geht die Sendung an den Absender zurück."}},
	{name: "parcel/confirm-address", split: env.SplitDev,
		note:    tr3{"Until we hear from you, the parcel stays at our depot.", "Hasta que nos responda, el paquete permanecerá en nuestro centro.", "Bis wir von Ihnen hören, bleibt die Sendung in unserem Depot."},
		subject: tr3{"Please confirm the delivery address for {track}", "Confirme la dirección de entrega de {track}", "Bitte Lieferadresse für {track} bestätigen"},
		body: tr3{
			"We could not match the address on parcel {track} to our records. Please confirm or correct your delivery address so we can deliver it on {day}.",
			"No hemos podido verificar la dirección del paquete {track}. Confirme o corrija la dirección de entrega para que podamos entregarlo el {day}.",
			"Die Adresse auf der Sendung {track} konnte nicht zugeordnet werden. Bitte bestätigen oder korrigieren Sie Ihre Lieferadresse, damit wir am {day} zustellen können."},
		cta: tr3{"Confirm address", "Confirmar dirección", "Adresse bestätigen"},
		press: tr3{
			"Confirm your details immediately and pay the {fee} {cur} correction fee, or the parcel will be returned.",
			"Confirme sus datos inmediatamente y abone {fee} {cur} por la corrección, o el paquete será devuelto.",
			"Bestätigen Sie Ihre Daten sofort und zahlen Sie {fee} {cur} Korrekturgebühr, sonst geht die Sendung zurück."}},
	{name: "parcel/import-charges", split: env.SplitTest,
		note:    tr3{"Charges not paid within 14 days mean the parcel is returned to the sender.", "Si los gastos no se pagan en 14 días, el paquete se devolverá al remitente.", "Werden die Abgaben nicht innerhalb von 14 Tagen bezahlt, geht die Sendung an den Absender zurück."},
		subject: tr3{"Import charges for parcel {track}", "Gastos de aduana del paquete {track}", "Einfuhrabgaben für Sendung {track}"},
		body: tr3{
			"Your parcel {track} is subject to import charges of {fee} {cur}. Once they are paid, we will release the parcel for delivery.",
			"Su paquete {track} está sujeto a gastos de aduana de {fee} {cur}. En cuanto se abonen, liberaremos el paquete para su entrega.",
			"Für Ihre Sendung {track} fallen Einfuhrabgaben von {fee} {cur} an. Sobald sie bezahlt sind, geben wir die Sendung zur Zustellung frei."},
		cta: tr3{"Pay charges", "Pagar gastos", "Abgaben bezahlen"},
		press: tr3{
			"Pay within 24 hours, otherwise the parcel will be destroyed and we will take legal action for the unpaid charges.",
			"Pague en las próximas 24 horas; de lo contrario el paquete será destruido y emprenderemos acciones legales.",
			"Zahlen Sie innerhalb von 24 Stunden, sonst wird die Sendung vernichtet und wir leiten rechtliche Schritte ein."}},

	// IT notices to all staff.
	{name: "it/authenticator", split: env.SplitTrain,
		note:    tr3{"Accounts without the app can no longer sign in after {day}.", "Las cuentas sin la app no podrán entrar después del {day}.", "Konten ohne App können sich nach {day} nicht mehr anmelden."},
		subject: tr3{"Register the Authenticator app by {day}", "Registre la app Authenticator antes del {day}", "Authenticator-App bis {day} registrieren"},
		body: tr3{
			"Hi all,\n\nfrom {day}, signing in to email and the VPN needs the Authenticator app. Please register it on your phone before then: open the link below, sign in with your company account and approve the test prompt.",
			"Hola a todos:\n\na partir del {day}, para entrar en el correo y la VPN hará falta la app Authenticator. Registradla antes en el móvil: abrid el enlace, entrad con la cuenta de empresa y aceptad el aviso de prueba.",
			"Hallo zusammen,\n\nab {day} braucht die Anmeldung bei E-Mail und VPN die Authenticator-App. Bitte registriert sie vorher auf eurem Telefon: Link öffnen, mit dem Firmenkonto anmelden und die Testanfrage bestätigen."},
		cta:    tr3{"Register Authenticator", "Registrar Authenticator", "Authenticator registrieren"},
		urgent: tr3{"This is urgent: please do it today, before you leave.", "Es urgente: hacedlo hoy antes de iros.", "Das ist dringend: bitte heute noch erledigen."},
		press: tr3{
			"Approve the sign-in request immediately; accounts without approval will lose access to email.",
			"Apruebe la solicitud de inmediato; si no, perderá el acceso al correo.",
			"Genehmigen Sie die Anfrage sofort, sonst wird Ihr Konto gesperrt."}},
	{name: "it/mailbox-move", split: env.SplitTrain,
		note:    tr3{"Mail sent during the move is delivered once it is finished.", "El correo que llegue durante la migración se entregará al terminar.", "Mails, die während des Umzugs ankommen, werden danach zugestellt."},
		subject: tr3{"Your mailbox moves to the new server tonight", "Su buzón se migra esta noche", "Ihr Postfach zieht heute Nacht um"},
		body: tr3{
			"Hi all,\n\ntonight we move every mailbox to the new mail server. After 6 pm, sign in once through the link below so your phone and laptop keep syncing. Nothing else changes.",
			"Hola a todos:\n\nesta noche migramos todos los buzones al nuevo servidor de correo. Después de las 18:00, entrad una vez con el enlace de abajo para que el móvil y el portátil sigan sincronizando. No cambia nada más.",
			"Hallo zusammen,\n\nheute Nacht ziehen alle Postfächer auf den neuen Mailserver um. Meldet euch nach 18 Uhr einmal über den Link unten an, damit Telefon und Laptop weiter synchronisieren. Sonst ändert sich nichts."},
		cta:    tr3{"Sign in to the new server", "Entrar en el nuevo servidor", "Beim neuen Server anmelden"},
		urgent: tr3{"Urgent: the move starts at 6 pm sharp.", "Urgente: la migración empieza a las 18:00 en punto.", "Dringend: Der Umzug beginnt pünktlich um 18 Uhr."},
		press: tr3{
			"Mailboxes not confirmed within 24 hours will be deleted: enter the code we sent to your phone right away.",
			"Los buzones no confirmados en 24 horas se eliminarán: introduzca el código de verificación de inmediato.",
			"Nicht bestätigte Postfächer werden gelöscht: Geben Sie den Bestätigungscode innerhalb von 24 Stunden ein."}},
	{name: "it/number-matching", split: env.SplitTrain,
		note:    tr3{"Never approve a request you did not start yourself.", "No aprobéis nunca una solicitud que no hayáis iniciado vosotros.", "Bestätigt nie eine Anfrage, die ihr nicht selbst gestartet habt."},
		subject: tr3{"Sign-in approvals change on {day}", "Cambian las aprobaciones de inicio de sesión el {day}", "Anmeldebestätigung ändert sich am {day}"},
		body: tr3{
			"Hi all,\n\nfrom {day}, Authenticator shows a two-digit number at every sign-in. Type the number you see on your screen into the app; if a prompt arrives that you did not start, deny it and call the service desk on extension {ext}.",
			"Hola a todos:\n\na partir del {day}, Authenticator mostrará un número de dos cifras en cada inicio de sesión. Escribid en la app el número que veis en pantalla; si llega un aviso que no habéis iniciado, rechazadlo y llamad a la extensión {ext}.",
			"Hallo zusammen,\n\nab {day} zeigt der Authenticator bei jeder Anmeldung eine zweistellige Zahl. Tippt die Zahl vom Bildschirm in die App; kommt eine Anfrage, die ihr nicht ausgelöst habt, lehnt sie ab und ruft den Servicedesk unter Durchwahl {ext} an."},
		cta:    tr3{"Read the guide", "Ver la guía", "Anleitung lesen"},
		urgent: tr3{"Urgent: read this before you next sign in.", "Urgente: leedlo antes de vuestro próximo acceso.", "Dringend: Bitte vor der nächsten Anmeldung lesen."},
		press: tr3{
			"We have sent several requests to your phone: approve the login now to avoid an account lockout within 24 hours.",
			"Hemos enviado varias solicitudes a su teléfono: apruebe la solicitud ahora o su cuenta será bloqueada.",
			"Wir haben mehrere Anfragen an Ihr Telefon gesendet: Bestätigen Sie die Anmeldung sofort, sonst wird Ihr Konto gesperrt."}},
	{name: "it/shared-drives", split: env.SplitDev,
		note:    tr3{"Links to old folders keep working for 30 days.", "Los enlaces a carpetas antiguas funcionarán 30 días más.", "Links auf alte Ordner funktionieren noch 30 Tage."},
		subject: tr3{"Shared drives move to the new platform on {day}", "Las unidades compartidas pasan a la nueva plataforma el {day}", "Gemeinsame Laufwerke ziehen am {day} um"},
		body: tr3{
			"Hi all,\n\non {day} the shared drives move to the new document platform. After the move, open the link below and sign in once to check that your team folders arrived. Files stay where they are until then.",
			"Hola a todos:\n\nel {day} las unidades compartidas pasan a la nueva plataforma de documentos. Después, abrid el enlace y entrad una vez para comprobar que las carpetas del equipo están. Hasta entonces, los archivos siguen donde están.",
			"Hallo zusammen,\n\nam {day} ziehen die gemeinsamen Laufwerke auf die neue Dokumentenplattform um. Öffnet danach den Link unten und meldet euch einmal an, um zu prüfen, ob eure Teamordner angekommen sind. Bis dahin bleibt alles, wo es ist."},
		cta:    tr3{"Open the new platform", "Abrir la nueva plataforma", "Neue Plattform öffnen"},
		urgent: tr3{"Urgent: save any open files before 5 pm on {day}.", "Urgente: guardad los archivos abiertos antes de las 17:00 del {day}.", "Dringend: Speichert offene Dateien bis {day} 17 Uhr."},
		press: tr3{
			"Folders of users who do not confirm their login credentials today will be deleted immediately.",
			"Las carpetas de quienes no confirmen sus datos de acceso hoy se borrarán de inmediato.",
			"Ordner von Nutzern, die ihre Zugangsdaten nicht sofort bestätigen, werden entfernt."}},
	{name: "it/vpn-certificate", split: env.SplitTest,
		note:    tr3{"Laptops without the new certificate cannot connect to the VPN after {day}.", "Los portátiles sin el nuevo certificado no podrán conectarse a la VPN después del {day}.", "Laptops ohne neues Zertifikat können sich nach {day} nicht mehr mit dem VPN verbinden."},
		subject: tr3{"VPN certificate renewal", "Renovación del certificado de la VPN", "Erneuerung des VPN-Zertifikats"},
		body: tr3{
			"Hi all,\n\nthe VPN certificate on company laptops expires on {day}. To renew it, open the page below while connected to the office network and sign in with your usual company account. It takes about a minute.",
			"Hola a todos:\n\nel certificado de la VPN de los portátiles de empresa caduca el {day}. Para renovarlo, abrid la página de abajo desde la red de la oficina y entrad con vuestra cuenta habitual. Se tarda un minuto.",
			"Hallo zusammen,\n\ndas VPN-Zertifikat auf den Firmenlaptops läuft am {day} ab. Zum Erneuern öffnet die Seite unten im Büronetz und meldet euch wie gewohnt mit dem Firmenkonto an. Das dauert etwa eine Minute."},
		cta:    tr3{"Renew certificate", "Renovar certificado", "Zertifikat erneuern"},
		urgent: tr3{"Please treat this as urgent: the old certificate stops working on {day}.", "Tratadlo como urgente: el certificado antiguo deja de funcionar el {day}.", "Bitte dringend erledigen: Das alte Zertifikat funktioniert ab {day} nicht mehr."},
		press: tr3{
			"Laptops that are not renewed will lose access tonight; approve the request on your phone as soon as possible.",
			"Su portátil perderá el acceso esta noche; apruebe la solicitud lo antes posible.",
			"Nicht erneuerte Laptops werden heute Nacht gesperrt; genehmigen Sie die Anfrage so schnell wie möglich."}},

	// A colleague's request: ask[gift_card] and ask[payroll_change] are
	// the fraud; the legitimate asks are what real colleagues write about
	// errands, gift cards and bank details.
	{name: "request/at-your-desk", split: env.SplitTrain,
		subject: tr3{"Quick favour", "Un favor rápido", "Kurze Bitte"},
		body: tr3{
			"Hi {first},\n\nare you at your desk? {ask}\n\nI'm in meetings all afternoon, so email only please.\n\n{name}",
			"Hola {first}:\n\n¿estás en tu mesa? {ask}\n\nEstoy en reuniones toda la tarde, así que mejor por correo.\n\n{name}",
			"Hallo {first},\n\nbist du am Platz? {ask}\n\nIch bin den ganzen Nachmittag in Meetings, also bitte nur per E-Mail.\n\n{name}"},
		urgent: tr3{"It's urgent, sorry.", "Es urgente, perdona.", "Es ist dringend, sorry."},
		ask: map[string]tr3{
			CampaignGiftCard: {
				"I need you to buy {n} Apple gift cards of 100 {cur} each for a client; it's urgent. Scratch the back and send me photos of the codes immediately.",
				"Necesito urgente que compres {n} tarjetas regalo de Google Play de 100 {cur} para un cliente y me mandes fotos de los códigos de inmediato.",
				"Ich brauche dringend {n} Geschenkkarten (Amazon, je 100 {cur}) für einen Kunden. Schick mir bitte sofort Fotos der Codes."},
			CampaignPayrollChange: {
				"I have changed banks: can you update my direct deposit to the new account below before the next payroll run? It's urgent, my old account will be closed.\n\n{details}",
				"He cambiado de banco: ¿puedes actualizar mi cuenta de nómina con los datos de abajo antes del próximo pago? Es urgente: la cuenta antigua será cancelada.\n\n{details}",
				"Ich habe die Bank gewechselt: Kannst du mein Gehaltskonto vor der nächsten Abrechnung auf die neue IBAN unten ändern? Das ist dringend, das alte Konto wird gelöscht.\n\n{details}"},
			askLegitGift:    {"Can you buy {n} gift cards of 25 {cur} for the team raffle on your way in? Keep the receipt and put it on the team expenses.", "¿Puedes comprar {n} tarjetas regalo de 25 {cur} para el sorteo del equipo de camino a la oficina? Guarda el tique y pásalo a gastos del equipo.", "Kannst du auf dem Weg ins Büro {n} Geschenkkarten zu je 25 {cur} für die Team-Verlosung kaufen? Heb den Beleg auf und reich ihn bei den Teamspesen ein."},
			askLegitPayroll: {"Payroll asked everyone who changed banks this year to update their bank details in the HR portal before the next run; can you pass that on to your team?", "Nómina pide que quien haya cambiado de banco este año actualice sus datos bancarios en el portal de personal antes del próximo pago; ¿se lo dices a tu equipo?", "Die Lohnbuchhaltung bittet alle, die dieses Jahr die Bank gewechselt haben, ihre Bankverbindung vor der nächsten Abrechnung im Personalportal zu ändern; gibst du das an dein Team weiter?"},
			askLegitErrand: {
				"Can you send me the signed contract for {client} before 3 pm? I need to forward it to legal.",
				"¿Me mandas el contrato firmado de {client} antes de las 15:00? Tengo que reenviarlo a jurídico.",
				"Kannst du mir den unterschriebenen Vertrag für {client} vor 15 Uhr schicken? Ich muss ihn an die Rechtsabteilung weiterleiten."},
		}},
	{name: "request/travelling", split: env.SplitTrain,
		subject: tr3{"Need this today", "Lo necesito hoy", "Brauche das heute"},
		body: tr3{
			"Hello {first},\n\nI'm travelling and can only read email, no calls. {ask}\n\nThanks for sorting this out,\n{name}",
			"Hola {first}:\n\nestoy de viaje y solo puedo leer el correo, nada de llamadas. {ask}\n\nGracias por encargarte,\n{name}",
			"Hallo {first},\n\nich bin unterwegs und kann nur Mails lesen, keine Anrufe. {ask}\n\nDanke, dass du das übernimmst,\n{name}"},
		urgent: tr3{"Please handle it as soon as possible.", "Por favor, lo antes posible.", "Bitte so schnell wie möglich."},
		ask: map[string]tr3{
			CampaignGiftCard: {
				"Please pick up {n} gift cards (Google Play, 100 {cur} each) as a thank-you for the team in {city}, and email me the card numbers right away, it's urgent; I will pay you back.",
				"Compra {n} tarjetas de regalo de Amazon de 100 {cur} para el equipo de {city} y envíame los números de inmediato, es urgente; te lo devuelvo.",
				"Besorg bitte {n} Gutscheinkarten (iTunes, je 100 {cur}) als Dankeschön für das Team in {city} und mail mir sofort die Nummern, es ist dringend; ich erstatte es dir."},
			CampaignPayrollChange: {
				"My salary should go to my new bank account from this month. Please change my bank details in payroll immediately; my old account will be closed on Friday:\n\n{details}",
				"Desde este mes mi nómina debe ir a mi nueva cuenta bancaria. Cambia mis datos bancarios inmediatamente, por favor; la cuenta antigua será cancelada el viernes:\n\n{details}",
				"Ab diesem Monat soll mein Gehalt auf mein neues Konto gehen. Bitte ändere umgehend meine Bankverbindung, das alte Konto wird am Freitag gelöscht:\n\n{details}"},
			askLegitGift:    {"Please order {n} gift cards of 50 {cur} through the procurement portal as thank-you gifts for the team in {city}; I've approved the budget.", "Pide {n} tarjetas regalo de 50 {cur} por el portal de compras como agradecimiento para el equipo de {city}; ya he aprobado el presupuesto.", "Bestell bitte über das Einkaufsportal {n} Geschenkkarten zu je 50 {cur} als Dankeschön für das Team in {city}; das Budget habe ich freigegeben."},
			askLegitPayroll: {"My new bank account is set up; I've entered it in the HR portal myself, so you only need to approve the change there when it shows up.", "Ya tengo la nueva cuenta bancaria; la he metido yo en el portal de personal, así que solo tienes que aprobar el cambio cuando aparezca.", "Mein neues Konto ist eingerichtet; ich habe die neue IBAN selbst im Personalportal eingetragen, du musst die Änderung dort nur freigeben."},
			askLegitErrand: {
				"Could you move my 2 pm with {client} to Thursday and let them know? You have access to my calendar.",
				"¿Puedes mover mi reunión de las 14:00 con {client} al jueves y avisarles? Tienes acceso a mi calendario.",
				"Kannst du meinen Termin um 14 Uhr mit {client} auf Donnerstag verschieben und Bescheid geben? Du hast Zugriff auf meinen Kalender."},
		}},
	{name: "request/before-noon", split: env.SplitTrain,
		subject: tr3{"Before noon please", "Antes de mediodía, por favor", "Bitte bis Mittag"},
		body: tr3{
			"Hi {first},\n\nsomething came up with a client and I need your help before noon. {ask}\n\nCheers,\n{name}",
			"Hola {first}:\n\nme ha surgido algo con un cliente y necesito tu ayuda antes de mediodía. {ask}\n\nUn saludo,\n{name}",
			"Hallo {first},\n\nbei einem Kunden ist etwas dazwischengekommen, ich brauche bis Mittag deine Hilfe. {ask}\n\nGruß\n{name}"},
		urgent: tr3{"Urgent, thanks!", "¡Urgente, gracias!", "Dringend, danke!"},
		ask: map[string]tr3{
			CampaignGiftCard: {
				"Get {n} Steam gift cards of 50 {cur} each from the shop downstairs right away and send me pictures of the back as soon as possible.",
				"Compra {n} tarjetas regalo de Steam de 50 {cur} en la tienda de abajo de inmediato y mándame fotos del reverso lo antes posible.",
				"Hol bitte {n} Geschenkkarten (Steam, je 50 {cur}) sofort im Laden unten und schick mir so schnell wie möglich Fotos der Rückseite."},
			CampaignPayrollChange: {
				"Please change my bank for this month's pay right away, the old account will be closed today. The direct deposit should go to:\n\n{details}",
				"Cambia de inmediato la cuenta de nómina de este mes a esta, la antigua será cancelada hoy:\n\n{details}",
				"Bitte überweise mein Gehalt diesen Monat sofort auf diese neue IBAN, das alte Konto wird heute gelöscht:\n\n{details}"},
			askLegitGift:    {"The client sent {n} gift cards as a thank-you; put them in the safe and log them in the gifts register, as compliance asks.", "El cliente nos ha enviado {n} tarjetas regalo como agradecimiento; guárdalas en la caja fuerte y anótalas en el registro de regalos.", "Der Kunde hat {n} Geschenkkarten als Dankeschön geschickt; leg sie in den Safe und trag sie ins Geschenkeregister ein."},
			askLegitPayroll: {"The direct deposit for the new starter is missing; please check their form in the HR portal and call payroll if it isn't there.", "Falta la cuenta de nómina del nuevo compañero; revisa su formulario en el portal de personal y llama a nómina si no está.", "Beim neuen Kollegen fehlt das Gehaltskonto; schau bitte im Personalportal nach seinem Formular und ruf sonst die Lohnbuchhaltung an."},
			askLegitErrand: {
				"Please print the slides for the {client} meeting and bring them to room 4 at 11.",
				"Imprime las diapositivas de la reunión con {client} y llévalas a la sala 4 a las 11.",
				"Druck bitte die Folien für das Treffen mit {client} aus und bring sie um 11 in Raum 4."},
		}},
	{name: "request/out-of-office", split: env.SplitDev,
		subject: tr3{"While I'm out", "Mientras estoy fuera", "Während ich weg bin"},
		body: tr3{
			"Hi {first},\n\nI'm out of the office until Monday and only checking mail now and then. {ask}\n\nMany thanks,\n{name}",
			"Hola {first}:\n\nestoy fuera de la oficina hasta el lunes y miro el correo de vez en cuando. {ask}\n\nMil gracias,\n{name}",
			"Hallo {first},\n\nich bin bis Montag nicht im Büro und schaue nur ab und zu in die Mails. {ask}\n\nVielen Dank\n{name}"},
		urgent: tr3{"This one can't wait, sorry.", "Esto no puede esperar, perdona.", "Das kann leider nicht warten."},
		ask: map[string]tr3{
			CampaignGiftCard: {
				"The {city} office needs {n} gift cards of 100 {cur} for the staff raffle; buy them today and email me the codes immediately, it's urgent; I'll approve the expense.",
				"La oficina de {city} necesita {n} tarjetas regalo de 100 {cur} para el sorteo del personal; cómpralas hoy y envíame los códigos de inmediato, es urgente.",
				"Das Büro in {city} braucht {n} Geschenkkarten zu je 100 {cur} für die Verlosung; kauf sie heute und schick mir umgehend die Codes, es ist dringend."},
			CampaignPayrollChange: {
				"Before you run payroll, please update my payroll account with the details below as soon as possible; the old one will be closed.\n\n{details}",
				"Antes de la nómina, actualiza lo antes posible mis datos bancarios con los de abajo; la cuenta antigua será cancelada.\n\n{details}",
				"Bitte ändere vor der Abrechnung so schnell wie möglich meine Bankverbindung auf die Daten unten; das alte Konto wird gelöscht.\n\n{details}"},
			askLegitGift:    {"Please remind the team that the gift cards from the summer party expire at the end of the month.", "Recuerda al equipo que las tarjetas regalo de la fiesta de verano caducan a final de mes.", "Erinnere das Team bitte daran, dass die Geschenkkarten vom Sommerfest Ende des Monats ablaufen."},
			askLegitPayroll: {"Payroll runs early this month because of the holiday; remind the team to submit expenses and any bank details changes by Wednesday.", "Este mes la nómina se adelanta por el festivo; recuerda al equipo que envíe los gastos y cualquier cambio de datos bancarios antes del miércoles.", "Die Gehaltsabrechnung läuft diesen Monat wegen des Feiertags früher; erinnere das Team, Spesen und Änderungen der Bankverbindung bis Mittwoch einzureichen."},
			askLegitErrand: {
				"Could you approve the holiday requests from my team in the HR portal? You have my delegation until Monday.",
				"¿Puedes aprobar en el portal de personal las vacaciones que ha pedido mi equipo? Tienes mi delegación hasta el lunes.",
				"Kannst du die Urlaubsanträge meines Teams im Personalportal freigeben? Du hast bis Montag meine Vertretung."},
		}},
	{name: "request/confidential", split: env.SplitTest,
		subject: tr3{"Confidential", "Confidencial", "Vertraulich"},
		body: tr3{
			"{first},\n\nplease keep this between us for now. {ask}\n\nReply here when it's done.\n{name}",
			"{first}:\n\nde momento, que quede entre nosotros. {ask}\n\nContéstame aquí cuando esté.\n{name}",
			"{first},\n\nbitte behalte das vorerst für dich. {ask}\n\nAntworte hier, wenn es erledigt ist.\n{name}"},
		urgent: tr3{"I need it right away.", "Lo necesito de inmediato.", "Ich brauche es sofort."},
		ask: map[string]tr3{
			CampaignGiftCard: {
				"We are surprising a key customer: buy {n} gift cards of 100 {cur} each as soon as possible and send me the codes by email immediately.",
				"Queremos sorprender a un cliente: compra {n} tarjetas regalo de 100 {cur} lo antes posible y mándame los códigos de inmediato.",
				"Wir überraschen einen wichtigen Kunden: Kauf so schnell wie möglich {n} Geschenkkarten zu je 100 {cur} und schick mir sofort die Codes."},
			CampaignPayrollChange: {
				"I'm moving my account after a fraud on my card. Update the bank account for my salary immediately, the old one will be closed on Friday:\n\n{details}",
				"Cambio de cuenta tras un fraude con mi tarjeta. Pon de inmediato mi nueva cuenta bancaria en la nómina; la antigua será cancelada:\n\n{details}",
				"Nach einem Kartenbetrug wechsle ich das Konto. Bitte trag umgehend meine neue IBAN für das Gehalt ein, das alte Konto wird gelöscht:\n\n{details}"},
			askLegitGift:    {"We are giving each person on the team a 50 {cur} gift card for the launch; keep it quiet until Friday and hand them out with me.", "Vamos a dar a cada persona del equipo una tarjeta regalo de 50 {cur} por el lanzamiento; no digas nada hasta el viernes.", "Jeder im Team bekommt zum Launch eine Geschenkkarte über 50 {cur}; behalte es bis Freitag für dich, dann verteilen wir sie zusammen."},
			askLegitPayroll: {"Between us: the salary increases go out with this month's payroll, so don't change any bank details in the system until it has run.", "Entre nosotros: las subidas salen con la nómina de este mes, así que no cambies datos bancarios en el sistema hasta que se pague.", "Unter uns: Die Gehaltserhöhungen kommen mit dieser Abrechnung, also bitte bis dahin keine Bankverbindung im System ändern."},
			askLegitErrand: {
				"I'm preparing next year's plan for the team; send me the list of open positions for {client} by Friday.",
				"Estoy preparando el plan del equipo para el año que viene; mándame la lista de vacantes del proyecto {client} antes del viernes.",
				"Ich bereite die Teamplanung fürs nächste Jahr vor; schick mir bis Freitag die offenen Stellen für das Projekt {client}."},
		}},

	// Newsletters, and the promotional mail phishing imitates (a digest
	// whose links go to a look-alike sign-in page).
	{name: "newsletter/weekly-digest", split: env.SplitTrain,
		press:   tr3{"Your subscription expires today: sign in to confirm your account or it will be closed.", "Su suscripción caduca hoy: verifique su cuenta de inmediato o será cancelada.", "Ihr Abo läuft heute ab: Bestätigen Sie Ihr Konto sofort, sonst wird es gelöscht."},
		subject: tr3{"This week: 5 stories on security and cloud", "Esta semana: lo más leído en tecnología", "Diese Woche: die meistgelesenen Artikel"},
		body:    tr3{"Here is what you missed this week:", "Esto es lo que te perdiste esta semana:", "Das haben Sie diese Woche verpasst:"},
		stories: tr3{"Story {i}: what changed in cloud security", "Artículo {i}: novedades en la nube", "Artikel {i}: Neues aus der Cloud"}},
	{name: "newsletter/events", split: env.SplitTrain,
		press:   tr3{"Seats are limited: register within 24 hours with your login credentials to keep your place.", "Plazas limitadas: regístrese en 24 horas con sus datos de acceso para no perder su plaza.", "Begrenzte Plätze: Melden Sie sich innerhalb von 24 Stunden mit Ihren Zugangsdaten an."},
		subject: tr3{"Upcoming events and webinars", "Próximos eventos y webinars", "Kommende Veranstaltungen und Webinare"},
		body:    tr3{"Join us at one of these sessions:", "Te esperamos en alguna de estas sesiones:", "Seien Sie bei einer dieser Sessions dabei:"},
		stories: tr3{"Webinar {i}: building reliable pipelines", "Webinar {i}: cómo construir flujos fiables", "Webinar {i}: zuverlässige Pipelines bauen"}},
	{name: "newsletter/top-reads", split: env.SplitTrain,
		press:   tr3{"Unusual activity on your reader account: verify your account immediately to keep reading.", "Actividad inusual en su cuenta de lector: verifique su cuenta de inmediato.", "Ungewöhnliche Aktivität in Ihrem Leserkonto: Bestätigen Sie Ihr Konto umgehend."},
		subject: tr3{"Top reads from the community", "Lo más comentado por la comunidad", "Die Top-Beiträge der Community"},
		body:    tr3{"The posts readers liked most:", "Las entradas que más gustaron:", "Diese Beiträge mochten unsere Leser am meisten:"},
		stories: tr3{"Post {i}: lessons from a year of on-call", "Entrada {i}: lecciones de un año de guardias", "Beitrag {i}: Lehren aus einem Jahr Rufbereitschaft"}},
	{name: "newsletter/product-update", split: env.SplitDev,
		press:   tr3{"Action required: confirm your details today or your account will be suspended.", "Acción requerida: confirme sus datos hoy o su cuenta será suspendida.", "Handlungsbedarf: Bestätigen Sie Ihre Daten heute, sonst wird Ihr Konto gesperrt."},
		subject: tr3{"Your monthly product update", "Novedades del mes", "Ihr monatliches Produkt-Update"},
		body:    tr3{"New features we shipped this month:", "Lo que hemos lanzado este mes:", "Das ist diesen Monat neu:"},
		stories: tr3{"Feature {i}: faster search and new filters", "Novedad {i}: búsqueda más rápida y nuevos filtros", "Neuerung {i}: schnellere Suche und neue Filter"}},
	{name: "newsletter/offers", split: env.SplitTest,
		press:   tr3{"Offer expires today: sign in to confirm your account and claim it right away.", "La oferta caduca hoy: confirme sus datos de inmediato para conseguirla.", "Angebot endet heute: Bestätigen Sie Ihre Daten sofort, um es zu sichern."},
		subject: tr3{"Offers of the week", "Ofertas de la semana", "Angebote der Woche"},
		body:    tr3{"Picked for you this week:", "Seleccionado para ti esta semana:", "Diese Woche für Sie ausgewählt:"},
		stories: tr3{"Offer {i}: 20% off selected books", "Oferta {i}: 20 % en libros seleccionados", "Angebot {i}: 20 % auf ausgewählte Bücher"}},
}

// Keys of a request family's legitimate asks.
const (
	askLegitErrand  = "legit_errand"
	askLegitGift    = "legit_gift"
	askLegitPayroll = "legit_payroll"
)

// themeOf is a family's theme, the part of its name before the slash.
func themeOf(f *family) string {
	t, _, _ := strings.Cut(f.name, "/")
	return t
}

// familiesBy indexes families by split ("" = every split) and theme.
var familiesBy = func() map[string]map[string][]*family {
	m := map[string]map[string][]*family{}
	for i := range families {
		f := &families[i]
		for _, s := range []string{"", f.split} {
			if m[s] == nil {
				m[s] = map[string][]*family{}
			}
			m[s][themeOf(f)] = append(m[s][themeOf(f)], f)
		}
	}
	return m
}()

// FamilySplit returns the split a template family belongs to, "" when no
// family has that name.
func FamilySplit(name string) string {
	for i := range families {
		if families[i].name == name {
			return families[i].split
		}
	}
	return ""
}

// family picks a template of theme from the generator's split and records
// it for the row's meta.
func (g *gen) family(theme string) *family {
	fs := familiesBy[g.split][theme]
	if len(fs) == 0 {
		panic(fmt.Sprintf("no %s family for split %q", theme, g.split))
	}
	f := pick(g.rng, fs)
	g.template = f.name
	return f
}

// fill replaces {key} placeholders with vals (key, value, key, value…).
func fill(s string, vals ...string) string {
	pairs := make([]string, 0, len(vals))
	for i := 0; i+1 < len(vals); i += 2 {
		pairs = append(pairs, "{"+vals[i]+"}", vals[i+1])
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// generatorSplits are the values GenerateSplit accepts.
var generatorSplits = []string{env.SplitTrain, env.SplitDev, env.SplitTest}

func checkGeneratorSplit(split string) error {
	if !slices.Contains(generatorSplits, split) {
		return fmt.Errorf("split %q: want one of %s", split, strings.Join(generatorSplits, ", "))
	}
	return nil
}
