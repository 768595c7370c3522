// The three forms as data: every field's JSON path (the `field` the validator
// names in its problems), its label and its kind. app.js renders them.
//
// Field kinds: text (default), select, checkbox (a boolean), checkboxes (an
// array of the checked values), date (yyyy-mm-dd), file (an image, sent as
// base64). Groups are fieldsets named by their JSON path (an object there,
// unless `flat`), so a problem about a whole group ("principal[1].address is
// required") is marked on its legend.

const STATES = 'AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY AS GU MP PR VI'.split(' ');
const ACCOUNT_TYPES = ['checking', 'savings'];

/** An address group under `prefix`. */
function address(prefix, legend = 'Address') {
  return {
    group: `${prefix}.address`,
    legend,
    fields: [
      { path: `${prefix}.address.address1`, label: 'Street address', autocomplete: 'address-line1' },
      { path: `${prefix}.address.address2`, label: 'Address line 2', optional: true, autocomplete: 'address-line2' },
      { path: `${prefix}.address.city`, label: 'City', autocomplete: 'address-level2' },
      { path: `${prefix}.address.state`, label: 'State', kind: 'select', options: STATES, short: true },
      { path: `${prefix}.address.zip`, label: 'ZIP code', hint: '12345 or 12345-6789', inputmode: 'numeric', short: true },
    ],
  };
}

/** A bank account group (custodial or billing). */
function bankAccount(prefix, legend) {
  return {
    group: prefix,
    legend,
    fields: [
      { path: `${prefix}.name`, label: 'Bank name' },
      { path: `${prefix}.contact_name`, label: 'Bank contact', optional: true },
      { path: `${prefix}.contact_title`, label: 'Contact title', optional: true },
      { path: `${prefix}.routing`, label: 'Routing number', hint: '9 digits', inputmode: 'numeric', short: true },
      { path: `${prefix}.account`, label: 'Account number', inputmode: 'numeric' },
      { path: `${prefix}.type`, label: 'Account type', kind: 'select', options: ACCOUNT_TYPES, short: true },
      { path: `${prefix}.check_image_front`, label: 'Voided check, front', kind: 'file' },
      { path: `${prefix}.check_image_back`, label: 'Voided check, back', kind: 'file' },
    ],
    groups: [address(prefix, 'Bank address')],
  };
}

/** The items of a repeated group: item `i` has the JSON path `name[i]`, the
 * legend "`title` i+1" and what `parts` makes for that path. */
function repeated(name, title, parts) {
  return (i) => {
    const path = `${name}[${i}]`;
    return { group: path, legend: `${title} ${i + 1}`, ...parts(path) };
  };
}

/** One principal (owner) of the merchant, item `i`. */
export const principal = repeated('principal', 'Principal', (p) => ({
  fields: [
    { path: `${p}.name`, label: 'Full name', autocomplete: 'off' },
    { path: `${p}.title`, label: 'Title' },
    { path: `${p}.ssn`, label: 'SSN', hint: '123-45-6789', inputmode: 'numeric', short: true },
    { path: `${p}.driver_license`, label: "Driver's license" },
    { path: `${p}.driver_license_state`, label: 'License state', kind: 'select', options: STATES, short: true },
    { path: `${p}.phone`, label: 'Phone', type: 'tel' },
    { path: `${p}.fax`, label: 'Fax', type: 'tel', optional: true },
    { path: `${p}.email`, label: 'Email', type: 'email' },
  ],
  groups: [address(p)],
}));

/** One trade reference of the merchant, item `i`. */
export const reference = repeated('references', 'Reference', (r) => ({
  fields: [
    { path: `${r}.name`, label: 'Business name' },
    { path: `${r}.contact_name`, label: 'Contact name' },
    { path: `${r}.phone`, label: 'Phone', type: 'tel' },
    { path: `${r}.state`, label: 'State', kind: 'select', options: STATES, short: true },
    { path: `${r}.account_number`, label: 'Account number', optional: true },
  ],
}));

/** The transaction form. */
export const transaction = {
  id: 'transaction',
  title: 'Transaction',
  fields: [
    { path: 'merchant_id', label: 'Merchant ID', hint: 'mer_…' },
    { path: 'amount', label: 'Amount (USD)', hint: 'e.g. 125.50', inputmode: 'decimal', short: true },
    { path: 'description', label: 'Description' },
    { path: 'type', label: 'Type', kind: 'select', options: ['debit', 'credit'], short: true },
    {
      path: 'standard_entry_class', label: 'Entry class', kind: 'select', short: true,
      options: ['PPD', 'WEB', 'CCD', 'TEL', 'BOC', 'POP', 'ICL'],
    },
  ],
  groups: [
    {
      group: 'customer',
      legend: 'Customer',
      choice: {
        name: 'customer-mode',
        options: [['account', 'Bank account'], ['token', 'Saved customer (token)']],
      },
      groups: [
        {
          group: 'customer#account',
          flat: true,
          when: 'account',
          fields: [
            { path: 'customer.name', label: 'Name', autocomplete: 'name' },
            { path: 'customer.routing_number', label: 'Routing number', hint: '9 digits', inputmode: 'numeric', short: true },
            { path: 'customer.account_number', label: 'Account number', inputmode: 'numeric' },
            { path: 'customer.account_type', label: 'Account type', kind: 'select', options: ACCOUNT_TYPES, short: true },
          ],
        },
        {
          group: 'customer#token',
          flat: true,
          when: 'token',
          fields: [{ path: 'customer.id', label: 'Customer token', hint: 'cus_…' }],
        },
      ],
    },
    {
      group: 'check',
      flat: true,
      legend: 'Check (BOC, POP, ICL)',
      classes: ['BOC', 'POP', 'ICL'],
      fields: [
        { path: 'check_number', label: 'Check number', inputmode: 'numeric', short: true, classes: ['BOC', 'POP'] },
        { path: 'state', label: 'State of the point of purchase', kind: 'select', options: STATES, short: true, classes: ['POP'] },
        { path: 'check_image_front', label: 'Check image, front', kind: 'file' },
        { path: 'check_image_back', label: 'Check image, back', kind: 'file' },
      ],
    },
  ],
};

/** The customer form. */
export const customer = {
  id: 'customer',
  title: 'Customer',
  fields: [
    { path: 'merchant_id', label: 'Merchant ID', hint: 'global, or mer_… for one merchant' },
    { path: 'name', label: 'Name', autocomplete: 'name' },
    { path: 'routing_number', label: 'Routing number', hint: '9 digits', inputmode: 'numeric', short: true },
    { path: 'account_number', label: 'Account number', inputmode: 'numeric' },
    { path: 'account_type', label: 'Account type', kind: 'select', options: ACCOUNT_TYPES, short: true },
  ],
};

/** The merchant application form. */
export const merchant = {
  id: 'merchant',
  title: 'Merchant application',
  groups: [
    {
      group: 'company_info',
      legend: 'Company',
      fields: [
        { path: 'company_info.name', label: 'Legal name', autocomplete: 'organization' },
        { path: 'company_info.dba', label: 'Doing business as', optional: true },
        { path: 'company_info.website', label: 'Website', type: 'url', hint: 'required for WEB' },
        { path: 'company_info.check_guarantee', label: 'Apply for check guarantee', kind: 'checkbox' },
      ],
      groups: [address('company_info', 'Headquarters (no PO box)')],
    },
    {
      group: 'velocities',
      legend: 'Expected volumes',
      fields: [
        { path: 'velocities.expected_checks_per_year', label: 'Transactions per year', inputmode: 'numeric', short: true },
        { path: 'velocities.expected_average_check_amount', label: 'Average amount', inputmode: 'decimal', short: true },
        { path: 'velocities.expected_sales_per_year', label: 'Yearly sales (all methods)', inputmode: 'decimal', short: true },
        { path: 'velocities.lowest_amount_allowed', label: 'Lowest amount', inputmode: 'decimal', short: true, optional: true },
        { path: 'velocities.highest_amount_allowed', label: 'Highest amount', inputmode: 'decimal', short: true },
        { path: 'velocities.decline_duplicates', label: 'Decline duplicate transactions', kind: 'checkbox' },
      ],
    },
    {
      group: 'business_data',
      legend: 'Business',
      fields: [
        { path: 'business_data.authorization_method', label: 'How payments are authorized' },
        { path: 'business_data.business_start_date', label: 'Business start date', kind: 'date', short: true },
        { path: 'business_data.merchant_category_code', label: 'Category code (MCC)', inputmode: 'numeric', short: true, optional: true },
        { path: 'business_data.business_type', label: 'Business type', optional: true },
        { path: 'business_data.goods_or_service', label: 'Goods or services', optional: true },
        { path: 'business_data.federal_tax_id', label: 'Federal tax ID (EIN)', hint: '12-3456789', short: true },
        {
          path: 'business_data.corporate_structure', label: 'Corporate structure', kind: 'select',
          options: ['LLC', 'Corporation', 'Partnership', 'Sole proprietor', 'Non-profit'],
        },
      ],
    },
    bankAccount('custodial_bank_account', 'Deposit account (custodial)'),
    { ...bankAccount('billing_bank_account', 'Billing account'), toggle: 'A separate account for monthly billing' },
    {
      group: 'support_contact',
      legend: 'Customer support',
      fields: [
        { path: 'support_contact.name', label: 'Name' },
        { path: 'support_contact.email', label: 'Email', type: 'email' },
        { path: 'support_contact.phone', label: 'Phone', type: 'tel' },
        { path: 'support_contact.fax', label: 'Fax', type: 'tel', optional: true },
      ],
    },
    { group: 'principal', legend: 'Principals (owners)', repeat: principal, min: 1, add: 'Add a principal' },
    {
      group: 'standard_entry_classes',
      flat: true,
      legend: 'Entry classes',
      fields: [
        { path: 'standard_entry_classes', label: 'The merchant will originate', kind: 'checkboxes', options: ['PPD', 'WEB', 'CCD', 'TEL'] },
      ],
    },
    { group: 'references', legend: 'Trade references', repeat: reference, min: 0, add: 'Add a reference', nullWhenEmpty: true },
  ],
};

const IMAGE = 'iVBORw0KGgoAAAANSUhEUg==';
const account = (name, routing) => ({
  name, contact_name: 'Pat Banker', contact_title: 'Branch Manager', routing, account: '123456789', type: 'checking',
  check_image_front: IMAGE, check_image_back: IMAGE,
  address: { address1: '270 Park Ave', city: 'New York', state: 'NY', zip: '10017' },
});

/** Example values that the service accepts ("Fill in an example"). */
export const examples = {
  transaction: {
    merchant_id: 'mer_0123456789abcdefghijKL', amount: '125.50', description: 'Invoice 42', type: 'debit',
    standard_entry_class: 'PPD',
    customer: { name: 'Ada Lovelace', routing_number: '021000021', account_number: '123456789', account_type: 'checking' },
  },
  customer: {
    merchant_id: 'global', name: 'Grace Hopper', routing_number: '026009593', account_number: '000123456789',
    account_type: 'savings',
  },
  merchant: {
    company_info: {
      check_guarantee: false, name: 'Acme Groceries LLC', dba: 'Acme Market', website: 'https://www.acme-market.example.com',
      address: { address1: '100 Main St', address2: 'Suite 4', city: 'Springfield', state: 'IL', zip: '62701' },
    },
    velocities: {
      expected_checks_per_year: '1200', expected_average_check_amount: '85.50', expected_sales_per_year: '2500000',
      lowest_amount_allowed: '1.00', highest_amount_allowed: '5000', decline_duplicates: true,
    },
    business_data: {
      authorization_method: 'Signed paper authorization at the counter', business_start_date: '2015-06-01',
      merchant_category_code: '5411', goods_or_service: 'Groceries', federal_tax_id: '12-3456789', corporate_structure: 'LLC',
    },
    custodial_bank_account: account('JPMorgan Chase', '021000021'),
    billing_bank_account: null,
    support_contact: { name: 'Acme Support', email: 'support@acme-market.example.com', phone: '(217) 555-0100' },
    principal: [{
      name: 'Jane Owner', title: 'Managing Member', ssn: '123-45-6789', driver_license: 'D123-4567-8901',
      driver_license_state: 'IL', phone: '217.555.0102', email: 'jane@acme-market.example.com',
      address: { address1: '9 Elm St', city: 'Springfield', state: 'IL', zip: '62702-1234' },
    }],
    standard_entry_classes: ['PPD', 'WEB'],
    references: null,
  },
};
