-- 029: every change to the configuration that instances keep in memory notifies them (docs/operations.md,
-- "Configuration in memory"). Each instance LISTENs on `zevauth_configuration` and drops its cached start
-- clients and exchange environments on any notification; the payload (the table's name) is only for
-- whoever watches the channel.
--
-- One statement-level trigger per table, for INSERT, UPDATE, DELETE and TRUNCATE: a statement touching a
-- thousand callbacks sends one notification, and PostgreSQL folds identical notifications of one transaction
-- into one. NOTIFY is delivered when the transaction commits and never when it rolls back, so an instance
-- is told only of changes it can read, and a rolled-back change costs nobody their cache.
CREATE FUNCTION zevauth_configuration_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('zevauth_configuration', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;

-- The tables the start client (`PostgresStore.clientEnvironment`, `PostgresAuthorizations.webStartClient`)
-- and the exchange environment are read from.
CREATE TRIGGER environments_configuration_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON environments
    FOR EACH STATEMENT EXECUTE FUNCTION zevauth_configuration_changed();
CREATE TRIGGER projects_configuration_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION zevauth_configuration_changed();
CREATE TRIGGER callbacks_configuration_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON callbacks
    FOR EACH STATEMENT EXECUTE FUNCTION zevauth_configuration_changed();
CREATE TRIGGER project_domains_configuration_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON project_domains
    FOR EACH STATEMENT EXECUTE FUNCTION zevauth_configuration_changed();
CREATE TRIGGER mobile_apps_configuration_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON mobile_apps
    FOR EACH STATEMENT EXECUTE FUNCTION zevauth_configuration_changed();
CREATE TRIGGER app_link_states_configuration_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON app_link_states
    FOR EACH STATEMENT EXECUTE FUNCTION zevauth_configuration_changed();
CREATE TRIGGER web_clients_configuration_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON web_clients
    FOR EACH STATEMENT EXECUTE FUNCTION zevauth_configuration_changed();
